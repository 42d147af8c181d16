import { startDeviceAuthorizationRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { startDeviceAuthorization } from "../../services/device-auth.ts";
import { forwardedOrigin } from "../forwarded-origin.ts";

export function registerStartDeviceAuthorization(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(startDeviceAuthorizationRoute, async (c) => {
    // The body is optional: a client may start a flow without naming itself.
    const body: { clientName?: string | undefined } = c.req.valid("json") ?? {};
    const started = await startDeviceAuthorization(ctx, {
      clientName: body.clientName,
      requestOrigin: forwardedOrigin(c.req.raw.headers),
    });
    c.header("cache-control", "no-store");
    return c.json(started, 201);
  });
}
