import { type Connector, redactUrlCredentials } from "@agentplane/contracts";
import { countRows, isUniqueViolation } from "@agentplane/db";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { badRequest, conflict, notFound, ProblemError } from "@agentplane/problem-details";
import { type Caller, enforceObjectLimit, limitExceeded } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { ConnectionsContext } from "../../context.ts";
import type { ConnectionsDb } from "../../db/schema/index.ts";
import type { OperationFilter } from "../openapi/filter.ts";
import { checkBaseUrl, type Discovered, type DiscoverySource, discoverSource } from "./discovery.ts";
import { prefixedConnectorId } from "./ids.ts";
import { credentialHeaders } from "./platform.ts";
import type { ConnectorRuntime } from "./runtime.ts";
import {
  CONNECTOR_COLUMNS,
  type ConnectorRow,
  fromJsonb,
  getConnectorRow,
  jsonb,
  toConnector,
  toolsHash,
} from "./store.ts";
import { refuseRedactedUrl } from "./url-credentials.ts";

export interface CreateConnectorInput {
  projectId: string;
  name: string;
  credentialId?: string | undefined;
  discoveryIntervalMinutes?: number | undefined;
  source:
    | { kind: "mcp"; url: string; headers?: Record<string, string> | undefined }
    | {
        kind: "http";
        specUrl?: string | undefined;
        spec?: string | Record<string, unknown> | undefined;
        baseUrl?: string | undefined;
        include?: OperationFilter | undefined;
        exclude?: OperationFilter | undefined;
      };
}

/** The source of a stored connector, with its credential injected for remote MCP servers. */
export async function sourceOf(ctx: ConnectionsContext, row: ConnectorRow): Promise<DiscoverySource> {
  if (row.kind === "mcp") {
    return { kind: "mcp", url: row.url ?? "", headers: await connectionHeaders(ctx, row) };
  }
  if (!row.spec_url) {
    throw new ProblemError("conflict", {
      detail: "This connector was built from an inline description; there is no URL to fetch again",
    });
  }
  return {
    kind: "http",
    specUrl: row.spec_url,
    baseUrl: row.base_url ?? undefined,
    include: fromJsonb<OperationFilter | null>(row.include) ?? undefined,
    exclude: fromJsonb<OperationFilter | null>(row.exclude) ?? undefined,
  };
}

/** Static headers plus the credential's header (resolved per use, never stored here). */
export async function connectionHeaders(ctx: ConnectionsContext, row: ConnectorRow): Promise<Record<string, string>> {
  const headers = { ...(fromJsonb<Record<string, string>>(row.headers) ?? {}) };
  if (row.credential_id) Object.assign(headers, await credentialHeaders(ctx, row.credential_id, row.project_id));
  return headers;
}

/** What the connector verbs work with: the service context and the live connector runtime. */
export type ConnectorsContext = ConnectionsContext & { connectors: ConnectorRuntime };

async function connectorCount(db: Kysely<ConnectionsDb>, projectId: string): Promise<number> {
  return countRows(db.selectFrom("connectors").where("project_id", "=", projectId));
}

export async function createConnector(
  ctx: ConnectorsContext,
  actor: Caller,
  input: CreateConnectorInput,
): Promise<Connector> {
  const runtime = ctx.connectors;
  const source = input.source;
  if (source.kind === "mcp") refuseRedactedUrl(source.url, "/body/url");
  else {
    refuseRedactedUrl(source.specUrl, "/body/specUrl");
    refuseRedactedUrl(source.baseUrl, "/body/baseUrl");
  }
  // Before discovery too: a project at its limit makes no outbound calls for a create that fails.
  const limit = ctx.config.objectLimits.connectors;
  if ((await connectorCount(ctx.db, input.projectId)) >= limit) throw limitExceeded("connectors", limit, "project");
  const credential = input.credentialId
    ? await credentialHeaders(ctx, input.credentialId, input.projectId).catch((error: unknown) => {
        if (error instanceof ProblemError && error.status === 404) {
          throw badRequest(`Credential ${input.credentialId} was not found in this project`, [
            { pointer: "/body/credentialId", message: "no such credential in this project" },
          ]);
        }
        throw error;
      })
    : {};
  const discovered: Discovered = await discoverSource(
    runtime,
    source.kind === "mcp"
      ? { kind: "mcp", url: source.url, headers: { ...(source.headers ?? {}), ...credential } }
      : source,
  );
  if (source.kind === "http" && !discovered.baseUrl) {
    throw badRequest("The description names no absolute server URL", [
      { pointer: "/body/baseUrl", message: "required when the description has no absolute servers[0].url" },
    ]);
  }
  const now = new Date();
  const id = prefixedConnectorId("mcp");
  try {
    const row = await withDomainEvents(ctx, async (trx) => {
      await enforceObjectLimit(trx, ctx.config.objectLimits, {
        kind: "connectors",
        holder: "project",
        holderId: input.projectId,
        count: () => connectorCount(trx, input.projectId),
      });
      const inserted = await trx
        .insertInto("connectors")
        .values({
          id,
          org_id: actor.orgId,
          project_id: input.projectId,
          name: input.name,
          kind: source.kind,
          url: source.kind === "mcp" ? source.url : null,
          spec_url: source.kind === "http" ? (source.specUrl ?? null) : null,
          base_url: source.kind === "http" ? (discovered.baseUrl ?? null) : null,
          headers: jsonb(source.kind === "mcp" ? (source.headers ?? {}) : {}) as never,
          credential_id: input.credentialId ?? null,
          include: source.kind === "http" && source.include ? (jsonb(source.include) as never) : null,
          exclude: source.kind === "http" && source.exclude ? (jsonb(source.exclude) as never) : null,
          discovery_interval_minutes: input.discoveryIntervalMinutes ?? null,
          next_discovery_at: input.discoveryIntervalMinutes
            ? new Date(now.getTime() + input.discoveryIntervalMinutes * 60_000)
            : null,
          status: "ready",
          last_discovered_at: now,
          tools: jsonb(discovered.tools) as never,
          tools_hash: toolsHash(discovered.tools),
          tool_count: discovered.tools.length,
        })
        .returning(CONNECTOR_COLUMNS)
        .executeTakeFirstOrThrow();
      await recordDomainEvent(ctx, trx, actor.principal, {
        action: "connector.created",
        orgId: actor.orgId,
        projectId: input.projectId,
        targetType: "connector",
        targetId: id,
        details: {
          name: input.name,
          kind: source.kind,
          toolCount: discovered.tools.length,
          ...shownUrls({ url: inserted.url, specUrl: inserted.spec_url, baseUrl: inserted.base_url }),
        },
        requestId: actor.requestId,
      });
      return inserted;
    });
    runtime.announce(input.projectId);
    return toConnector(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`A connector named ${input.name} already exists in this project`);
    throw error;
  }
}

export async function listConnectors(
  ctx: ConnectionsContext,
  projectId: string,
  limit: number,
  cursor: string | undefined,
): Promise<{ items: Connector[]; nextCursor?: string }> {
  let query = ctx.db.selectFrom("connectors").select(CONNECTOR_COLUMNS).where("project_id", "=", projectId);
  if (cursor) query = query.where("id", ">", cursor);
  const rows = await query
    .orderBy("id")
    .limit(limit + 1)
    .execute();
  const items = rows.slice(0, limit).map(toConnector);
  const last = items.at(-1);
  return { items, ...(rows.length > limit && last ? { nextCursor: last.id } : {}) };
}

export async function updateConnector(
  ctx: ConnectorsContext,
  actor: Caller,
  {
    connector: row,
    ...input
  }: {
    /** The connector, loaded (and authorized on) by the handler. */
    connector: ConnectorRow;
    name?: string | undefined;
    baseUrl?: string | undefined;
    headers?: Record<string, string> | undefined;
    discoveryIntervalMinutes?: number | null | undefined;
  },
): Promise<Connector> {
  const runtime = ctx.connectors;
  if (input.baseUrl && row.kind !== "http") {
    throw badRequest("Only HTTP connectors have a base URL", [
      { pointer: "/body/baseUrl", message: "not for kind mcp" },
    ]);
  }
  // The base URL sent back as it was answered, its credentials redacted, keeps the stored one whole.
  const shown = row.base_url ? redactUrlCredentials(row.base_url) : undefined;
  if (input.baseUrl && shown !== row.base_url && input.baseUrl === shown) input.baseUrl = undefined;
  refuseRedactedUrl(input.baseUrl, "/body/baseUrl");
  if (input.baseUrl) checkBaseUrl(runtime, input.baseUrl, "/body/baseUrl");
  try {
    const updated = await withDomainEvents(ctx, async (trx) => {
      const next = await trx
        .updateTable("connectors")
        .set({
          ...(input.name ? { name: input.name } : {}),
          ...(input.baseUrl ? { base_url: input.baseUrl } : {}),
          ...(input.headers ? { headers: jsonb(input.headers) as never } : {}),
          ...(input.discoveryIntervalMinutes !== undefined
            ? {
                discovery_interval_minutes: input.discoveryIntervalMinutes,
                next_discovery_at: input.discoveryIntervalMinutes
                  ? new Date(Date.now() + input.discoveryIntervalMinutes * 60_000)
                  : null,
              }
            : {}),
          updated_at: new Date(),
        })
        .where("id", "=", row.id)
        .returning(CONNECTOR_COLUMNS)
        .executeTakeFirstOrThrow();
      await recordDomainEvent(ctx, trx, actor.principal, {
        action: "connector.updated",
        orgId: row.org_id,
        projectId: row.project_id,
        targetType: "connector",
        targetId: row.id,
        details: {
          fields: Object.keys(input).filter((k) => input[k as keyof typeof input] !== undefined),
          ...shownUrls({ baseUrl: input.baseUrl }),
        },
        requestId: actor.requestId,
      });
      return next;
    });
    if (input.name) runtime.announce(row.project_id);
    else runtime.invalidate(row.project_id);
    return toConnector(updated);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`A connector named ${input.name} already exists in this project`);
    throw error;
  }
}

export async function deleteConnector(
  ctx: ConnectorsContext,
  actor: Caller,
  { connector: row }: { connector: ConnectorRow },
): Promise<void> {
  const runtime = ctx.connectors;
  await withDomainEvents(ctx, async (trx) => {
    await trx.deleteFrom("connectors").where("id", "=", row.id).execute();
    await recordDomainEvent(ctx, trx, actor.principal, {
      action: "connector.deleted",
      orgId: row.org_id,
      projectId: row.project_id,
      targetType: "connector",
      targetId: row.id,
      details: { name: row.name },
      requestId: actor.requestId,
    });
  });
  runtime.announce(row.project_id);
}

export async function setConnectorCredential(
  ctx: ConnectorsContext,
  actor: Caller,
  { connector: row, credentialId }: { connector: ConnectorRow; credentialId: string | null },
): Promise<Connector> {
  const runtime = ctx.connectors;
  if (credentialId) {
    await credentialHeaders(ctx, credentialId, row.project_id).catch((error: unknown) => {
      if (error instanceof ProblemError && error.status === 404) {
        throw badRequest(`Credential ${credentialId} was not found in this project`, [
          { pointer: "/body/credentialId", message: "no such credential in this project" },
        ]);
      }
      throw error;
    });
  }
  const updated = await withDomainEvents(ctx, async (trx) => {
    const next = await trx
      .updateTable("connectors")
      .set({ credential_id: credentialId, updated_at: new Date() })
      .where("id", "=", row.id)
      .returning(CONNECTOR_COLUMNS)
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, actor.principal, {
      action: credentialId ? "connector.credential_attached" : "connector.credential_removed",
      orgId: row.org_id,
      projectId: row.project_id,
      targetType: "connector",
      targetId: row.id,
      details: credentialId ? { credentialId } : {},
      requestId: actor.requestId,
    });
    return next;
  });
  runtime.invalidate(row.project_id);
  return toConnector(updated);
}

/** URLs for an audit record: the ones present, with their credentials redacted. */
function shownUrls(urls: Record<string, string | null | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(urls).flatMap(([name, url]) => (url ? [[name, redactUrlCredentials(url)]] : [])),
  );
}

/** A connector of the project named in a project-scoped path (404 when it lives elsewhere). */
export async function connectorInProject(
  ctx: ConnectionsContext,
  projectId: string,
  id: string,
): Promise<ConnectorRow> {
  const row = await getConnectorRow(ctx.db, id);
  if (row.project_id !== projectId) throw notFound("Connector", id);
  return row;
}
