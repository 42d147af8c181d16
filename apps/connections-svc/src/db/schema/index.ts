import type { AwsConnectionsTable } from "./aws.ts";
import type { ClustersTable } from "./clusters.ts";
import type { ConnectorEntriesTable, ConnectorPendingSpecsTable, ConnectorsTable } from "./connectors.ts";

/** The Postgres schema connections-svc owns. */
export const CONNECTIONS_SCHEMA = "connections";

/**
 * The Kysely database type, composed from one table file per area. Connector tables are added here
 * from `./connectors.ts` by the connectors area.
 */
export interface ConnectionsDb {
  clusters: ClustersTable;
  aws_connections: AwsConnectionsTable;
  connectors: ConnectorsTable;
  connector_pending_specs: ConnectorPendingSpecsTable;
  connector_entries: ConnectorEntriesTable;
}
