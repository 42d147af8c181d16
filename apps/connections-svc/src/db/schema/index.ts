import type { AwsConnectionsTable } from "./aws.ts";
import type { ClustersTable } from "./clusters.ts";

/** The Postgres schema connections-svc owns. */
export const CONNECTIONS_SCHEMA = "connections";

/**
 * The Kysely database type, composed from one table file per area. Connector tables are added here
 * from `./connectors.ts` by the connectors area.
 */
export interface ConnectionsDb {
  clusters: ClustersTable;
  aws_connections: AwsConnectionsTable;
}
