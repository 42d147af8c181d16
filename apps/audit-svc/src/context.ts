import type { Authorizer } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { AuditDb } from "./db/schema.ts";
import type { SpendLedger } from "./services/spend.ts";

/** What every route handler gets. */
export interface AuditContext {
  db: Kysely<AuditDb>;
  authorizer: Authorizer;
  spend: SpendLedger;
}
