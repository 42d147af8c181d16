import type { Authorizer, ServiceApp } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { AuditDb } from "../db/schema.ts";
import type { SpendLedger } from "../services/spend.ts";

export interface RouteDeps {
  app: ServiceApp;
  db: Kysely<AuditDb>;
  authorizer: Authorizer;
  spend: SpendLedger;
}
