import { pollDeviceAuthorizationRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { pollDeviceAuthorization } from "../../services/device-auth.ts";

export function registerPollDeviceAuthorization(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(pollDeviceAuthorizationRoute, async (c) => {
    // The token is a secret: never keep this answer in a cache (RFC 6749 §5.1).
    c.header("cache-control", "no-store");
    const token = await pollDeviceAuthorization(ctx, c.req.valid("json").deviceCode);
    return c.json(token, 200);
  });
}
