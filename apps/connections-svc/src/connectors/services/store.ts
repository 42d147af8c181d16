import { createHash } from "node:crypto";
import { type Connector, redactCredentialsInText, redactUrlCredentials } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { type Kysely, type RawBuilder, type Selectable, sql } from "kysely";
import type { ConnectorsTable } from "../../db/schema/connectors.ts";
import type { ConnectionsDb } from "../../db/schema/index.ts";
import type { OperationFilter } from "../openapi/filter.ts";
import type { ConnectorTool } from "../openapi/tools.ts";
import { credentialsOfUrls } from "./url-credentials.ts";

/** A connector row without its tools (read by `ConnectorRuntime.tools`, cached by tools hash). */
export type ConnectorRow = Omit<Selectable<ConnectorsTable>, "tools">;

/** Every column but `tools`, which can be megabytes: requests read it once per version, not per call. */
export const CONNECTOR_COLUMNS = [
  "id",
  "org_id",
  "project_id",
  "name",
  "kind",
  "url",
  "spec_url",
  "base_url",
  "headers",
  "credential_id",
  "include",
  "exclude",
  "discovery_interval_minutes",
  "status",
  "last_error",
  "last_discovered_at",
  "next_discovery_at",
  "version",
  "tools_hash",
  "tool_count",
  "created_at",
  "updated_at",
] as const;

/** A jsonb parameter both drivers read the same way: sent as text and cast by the server. */
export function jsonb(value: unknown): RawBuilder<unknown> {
  return sql`${JSON.stringify(value)}::text::jsonb`;
}

/** Drivers hand jsonb back parsed (postgres.js, PGlite); a string is parsed here for safety. */
export function fromJsonb<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** SHA-256 of the tools' canonical JSON (keys sorted), so equal tool sets hash equally. */
export function toolsHash(tools: ConnectorTool[]): string {
  return createHash("sha256").update(canonicalJson(tools)).digest("hex");
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/**
 * The connector as answered: URLs with their credentials replaced by the marker (readers with
 * `connections:read` are not the admins who set them), the last error scrubbed of them too.
 */
export function toConnector(row: ConnectorRow): Connector {
  const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : undefined);
  const include = fromJsonb<OperationFilter | null>(row.include);
  const exclude = fromJsonb<OperationFilter | null>(row.exclude);
  const lastDiscoveredAt = iso(row.last_discovered_at);
  return {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    name: row.name,
    kind: row.kind,
    ...(row.url ? { url: redactUrlCredentials(row.url) } : {}),
    ...(row.spec_url ? { specUrl: redactUrlCredentials(row.spec_url) } : {}),
    ...(row.base_url ? { baseUrl: redactUrlCredentials(row.base_url) } : {}),
    headerNames: Object.keys(fromJsonb<Record<string, string>>(row.headers) ?? {}).sort(),
    ...(row.credential_id ? { credentialId: row.credential_id } : {}),
    ...(include ? { include: include as Connector["include"] } : {}),
    ...(exclude ? { exclude: exclude as Connector["exclude"] } : {}),
    ...(row.discovery_interval_minutes ? { discoveryIntervalMinutes: row.discovery_interval_minutes } : {}),
    status: row.status,
    ...(row.last_error ? { lastError: redactCredentialsInText(row.last_error, connectorCredentials(row)) } : {}),
    toolCount: row.tool_count,
    ...(lastDiscoveredAt ? { lastDiscoveredAt } : {}),
    version: row.version,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The credentials a connector's stored URLs carry (to hide wherever they may be repeated). */
export function connectorCredentials(row: Pick<ConnectorRow, "url" | "spec_url" | "base_url">): string[] {
  return credentialsOfUrls(row.url, row.spec_url, row.base_url);
}

/** The row, or a 404 (the same answer whether it does not exist or lives in a project the caller cannot see). */
export async function getConnectorRow(db: Kysely<ConnectionsDb>, id: string): Promise<ConnectorRow> {
  const row = await db.selectFrom("connectors").select(CONNECTOR_COLUMNS).where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound("Connector", id);
  return row;
}

/** What authorizing on a connector asks: its project, answering 404 in the connector's name. */
export function connectorScope(row: ConnectorRow): { projectId: string; resource: string } {
  return { projectId: row.project_id, resource: `Connector ${row.id}` };
}
