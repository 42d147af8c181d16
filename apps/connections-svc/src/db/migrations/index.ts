import type { MigrationList } from "@agentplane/db";
import { outboxMigrations } from "@agentplane/events";
import * as clustersAws from "./0001-clusters-aws.ts";
import * as connectors from "./0002-connectors.ts";

/**
 * Applied in name order under an advisory lock (see `migrateToLatest`). Each area adds its own
 * numbered file: clusters and AWS connections in 0001, connectors in 0002.
 */
export const migrations: MigrationList = {
  ...outboxMigrations("0000"),
  "0001_clusters_aws": clustersAws,
  "0002_connectors": connectors,
};
