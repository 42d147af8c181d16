import type { Bus, Outbox } from "@agentplane/events";
import type { Logger } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { LocalAuthorizer } from "./authz/local-authorizer.ts";
import type { ResolvedTenancyConfig } from "./config.ts";
import type { TenancyDatabase } from "./db/schema.ts";
import type { OidcActivation } from "./services/oidc-activation.ts";

/** What every route and service verb of tenancy works with. */
export interface TenancyContext {
  db: Kysely<TenancyDatabase>;
  bus: Bus;
  /** Domain audit events are written here inside the transaction of the change they describe. */
  outbox: Outbox;
  logger: Logger;
  config: ResolvedTenancyConfig;
  authorizer: LocalAuthorizer;
  /** Set when an OIDC issuer is configured: activation approval by signing in there. */
  oidc?: OidcActivation;
}
