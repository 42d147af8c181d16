import type { Generated } from "kysely";

/** A connector: a remote MCP server (`mcp`) or an HTTP API from an OpenAPI description (`http`). */
export interface ConnectorsTable {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  kind: "mcp" | "http";
  url: string | null;
  spec_url: string | null;
  base_url: string | null;
  /** jsonb: extra headers sent to the server (values never returned by the API). */
  headers: Record<string, string>;
  credential_id: string | null;
  /** jsonb OperationFilter */
  include: unknown;
  exclude: unknown;
  discovery_interval_minutes: number | null;
  status: "ready" | "error";
  last_error: string | null;
  last_discovered_at: Date | null;
  next_discovery_at: Date | null;
  /** Incremented by each promotion. */
  version: Generated<number>;
  /** jsonb ConnectorTool[]: the current version's tools (HTTP tools carry their operation binding). */
  tools: unknown;
  /** SHA-256 of the canonical tools JSON: unchanged discoveries store nothing. */
  tools_hash: string;
  tool_count: number;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ConnectorPendingSpecsTable {
  id: string;
  connector_id: string;
  base_version: number;
  status: "pending" | "promoted" | "superseded";
  tools: unknown;
  tools_hash: string;
  warnings: unknown;
  created_by: string | null;
  created_at: Generated<Date>;
  promoted_at: Date | null;
  promoted_by: string | null;
}

export interface ConnectorEntriesTable {
  connector_id: string;
  entry_name: string;
  visibility: "visible" | "hidden";
  /** jsonb string[] | null: only these teams see the tool. */
  teams: string[] | null;
  updated_by: string | null;
  updated_at: Generated<Date>;
}
