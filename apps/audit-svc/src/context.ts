import type { Outbox } from "@agentplane/events";
import type { Authorizer } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { AuditDb } from "./db/schema.ts";
import type { SpendLedger } from "./services/spend.ts";

/** What every route handler gets. */
export interface AuditContext {
  db: Kysely<AuditDb>;
  /** Domain events of this service's own writes are written here inside the transaction of the change. */
  outbox: Outbox;
  authorizer: Authorizer;
  spend: SpendLedger;
}
