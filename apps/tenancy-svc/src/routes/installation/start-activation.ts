import { startActivationRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as installation from "../../services/installation.ts";

/** The origin the caller used, as the gateway reports it; undefined when it did not say. */
function forwardedOrigin(headers: Headers): string | undefined {
  const host = headers.get("x-forwarded-host");
  const proto = headers.get("x-forwarded-proto");
  if (!host || (proto !== "http" && proto !== "https")) return undefined;
  const origin = `${proto}://${host}`;
  return URL.canParse(origin) && new URL(origin).host === host.toLowerCase() ? origin : undefined;
}

export function registerStartActivation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(startActivationRoute, async (c) =>
    c.json(await installation.startActivation(ctx, forwardedOrigin(c.req.raw.headers)), 201),
  );
}
