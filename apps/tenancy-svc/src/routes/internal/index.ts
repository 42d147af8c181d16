import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { registerInternalAuthorize } from "./authorize.ts";
import { registerProjectVerificationKeys } from "./project-verification-keys.ts";
import { registerResolveApiToken } from "./resolve-api-token.ts";
import { registerResolveOidcUser } from "./resolve-oidc-user.ts";
import { registerResolveOrg } from "./resolve-org.ts";
import { registerSignProjectToken } from "./sign-project-token.ts";

/** The internal endpoints (service identities only: the gateway and other services), one per file, by their contracts. */
export function registerInternalRoutes(app: ServiceApp, ctx: TenancyContext): void {
  registerResolveApiToken(app, ctx);
  registerResolveOidcUser(app, ctx);
  registerProjectVerificationKeys(app, ctx);
  registerResolveOrg(app, ctx);
  registerSignProjectToken(app, ctx);
  registerInternalAuthorize(app, ctx);
}
