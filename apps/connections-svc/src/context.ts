import type { Database } from "@agentplane/db";
import type { Bus, Outbox } from "@agentplane/events";
import type { Authorizer, InternalKeys, Logger, ServiceApp, ServiceClient } from "@agentplane/service-kit";
import type { SafeFetcher } from "@agentplane/service-kit/outbound";
import type { Kysely } from "kysely";
import type { ConnectionsConfig } from "./config.ts";
import type { ConnectionsDb } from "./db/schema/index.ts";
import type { ProjectSigner } from "./services/project-signer.ts";

export type ResolvedConnectionsConfig = Required<Omit<ConnectionsConfig, "replicaUrl" | "connectors" | "eventRelay">> &
  Pick<ConnectionsConfig, "replicaUrl">;

/** What every area's routes and verbs are built from (one per service instance). */
export interface ConnectionsContext {
  app: ServiceApp;
  db: Kysely<ConnectionsDb>;
  database: Database;
  bus: Bus;
  /** Domain audit records are written here inside the transaction of the change. */
  outbox: Outbox;
  authorizer: Authorizer;
  /** governance-svc's internal API (decisions, credential resolve); absent when not deployed. */
  governance: ServiceClient | undefined;
  signer: ProjectSigner;
  keys: InternalKeys;
  logger: Logger;
  /**
   * The one way out to addresses a tenant chose (connector APIs and MCP servers, their discovery,
   * AWS endpoint overrides): every address checked against `CONNECTOR_ALLOWED_HOSTS`'s policy.
   */
  outbound: SafeFetcher;
  config: ResolvedConnectionsConfig;
}
