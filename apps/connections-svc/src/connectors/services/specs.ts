import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { conflict, notFound, ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import type { Selectable } from "kysely";
import type { ConnectionsContext } from "../../context.ts";
import type { ConnectorPendingSpecsTable } from "../../db/schema/connectors.ts";
import type { ConnectorTool, SkippedOperation } from "../openapi/tools.ts";
import { sourceOf } from "./connectors.ts";
import { diffToolSets, type ToolSetDiff } from "./diff.ts";
import { discoverSource } from "./discovery.ts";
import { prefixedConnectorId } from "./ids.ts";
import type { ConnectorRuntime } from "./runtime.ts";
import {
  CONNECTOR_COLUMNS,
  type ConnectorRow,
  connectorCredentials,
  fromJsonb,
  getConnectorRow,
  jsonb,
  toConnector,
  toolsHash,
} from "./store.ts";
import { withoutUrlCredentials } from "./url-credentials.ts";

type PendingRow = Selectable<ConnectorPendingSpecsTable>;

export function toPendingSpec(row: PendingRow) {
  return {
    id: row.id,
    connectorId: row.connector_id,
    status: row.status,
    baseVersion: row.base_version,
    toolCount: (fromJsonb<unknown[]>(row.tools) ?? []).length,
    warnings: fromJsonb<SkippedOperation[]>(row.warnings) ?? [],
    createdAt: new Date(row.created_at).toISOString(),
    ...(row.promoted_at ? { promotedAt: new Date(row.promoted_at).toISOString() } : {}),
    ...(row.promoted_by ? { promotedBy: row.promoted_by } : {}),
  };
}

/**
 * Fetches the connector's source again. A change is stored as a pending spec and never applied; a
 * source equal to the current version or to a spec already pending stores nothing. A failure marks
 * the connector `error` with the reason and is answered as such.
 */
export async function discoverAgain(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  row: ConnectorRow,
  actor: Caller | undefined,
): Promise<{ changed: boolean; pendingSpec?: ReturnType<typeof toPendingSpec> }> {
  const now = new Date();
  const nextDiscovery = row.discovery_interval_minutes
    ? new Date(now.getTime() + row.discovery_interval_minutes * 60_000)
    : null;
  let discovered: Awaited<ReturnType<typeof discoverSource>>;
  try {
    discovered = await discoverSource(runtime, await sourceOf(ctx, row));
  } catch (raw) {
    const error = withoutUrlCredentials(raw, connectorCredentials(row));
    const message = error instanceof ProblemError ? (error.detail ?? error.title) : (error as Error).message;
    await ctx.db
      .updateTable("connectors")
      .set({ status: "error", last_error: message.slice(0, 2000), next_discovery_at: nextDiscovery })
      .where("id", "=", row.id)
      .execute();
    throw error;
  }
  const hash = toolsHash(discovered.tools);
  return withDomainEvents(ctx, async (trx) => {
    await trx
      .updateTable("connectors")
      .set({ status: "ready", last_error: null, last_discovered_at: now, next_discovery_at: nextDiscovery })
      .where("id", "=", row.id)
      .execute();
    const samePending = await trx
      .selectFrom("connector_pending_specs")
      .select("id")
      .where("connector_id", "=", row.id)
      .where("status", "=", "pending")
      .where("tools_hash", "=", hash)
      .executeTakeFirst();
    if (hash === row.tools_hash || samePending) return { changed: false };
    const spec = await trx
      .insertInto("connector_pending_specs")
      .values({
        id: prefixedConnectorId("pspec"),
        connector_id: row.id,
        base_version: row.version,
        status: "pending",
        tools: jsonb(discovered.tools) as never,
        tools_hash: hash,
        warnings: jsonb(discovered.warnings) as never,
        created_by: actor?.principal.id ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, actor?.principal, {
      action: "connector.spec_discovered",
      orgId: row.org_id,
      projectId: row.project_id,
      targetType: "connector",
      targetId: row.id,
      details: { pendingSpecId: spec.id, toolCount: discovered.tools.length, scheduled: actor === undefined },
      requestId: actor?.requestId,
    });
    return { changed: true, pendingSpec: toPendingSpec(spec) };
  });
}

export async function listPendingSpecs(ctx: ConnectionsContext, connectorId: string) {
  const rows = await ctx.db
    .selectFrom("connector_pending_specs")
    .selectAll()
    .where("connector_id", "=", connectorId)
    .where("status", "=", "pending")
    .orderBy("id", "desc")
    .execute();
  return { items: rows.map(toPendingSpec) };
}

/** How many specs of a connector wait for promotion. */
export async function countPendingSpecs(ctx: ConnectionsContext, connectorId: string): Promise<number> {
  const pending = await ctx.db
    .selectFrom("connector_pending_specs")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("connector_id", "=", connectorId)
    .where("status", "=", "pending")
    .executeTakeFirst();
  return Number(pending?.n ?? 0);
}

async function pendingRow(ctx: ConnectionsContext, connectorId: string, specId: string): Promise<PendingRow> {
  const row = await ctx.db
    .selectFrom("connector_pending_specs")
    .selectAll()
    .where("connector_id", "=", connectorId)
    .where("id", "=", specId)
    .executeTakeFirst();
  if (!row) throw notFound("Pending spec", specId);
  return row;
}

export async function diffPendingSpec(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  row: ConnectorRow,
  specId: string,
): Promise<ToolSetDiff> {
  const spec = await pendingRow(ctx, row.id, specId);
  return diffToolSets((await runtime.tools(ctx.db, row)).tools, fromJsonb<ConnectorTool[]>(spec.tools) ?? []);
}

/**
 * Applies a pending spec as the connector's next version. A spec discovered against an older
 * version (another was promoted since) is stale: 409. Visibility settings are kept by tool name.
 */
export async function promotePendingSpec(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  actor: Caller,
  connectorId: string,
  specId: string,
) {
  const result = await withDomainEvents(ctx, async (trx) => {
    const row = await trx
      .selectFrom("connectors")
      .selectAll()
      .where("id", "=", connectorId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw notFound("Connector", connectorId);
    const spec = await pendingRow({ ...ctx, db: trx }, connectorId, specId);
    if (spec.status !== "pending") throw conflict(`Pending spec ${specId} is ${spec.status}`);
    if (spec.base_version !== row.version) {
      throw conflict(
        `Pending spec ${specId} was discovered against version ${spec.base_version}; the connector is at version ${row.version}`,
      );
    }
    const tools = fromJsonb<ConnectorTool[]>(spec.tools) ?? [];
    const now = new Date();
    const updated = await trx
      .updateTable("connectors")
      .set({
        tools: jsonb(tools) as never,
        tools_hash: spec.tools_hash,
        tool_count: tools.length,
        version: row.version + 1,
        updated_at: now,
      })
      .where("id", "=", connectorId)
      .returning(CONNECTOR_COLUMNS)
      .executeTakeFirstOrThrow();
    const promoted = await trx
      .updateTable("connector_pending_specs")
      .set({ status: "promoted", promoted_at: now, promoted_by: actor.principal.id })
      .where("id", "=", specId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .updateTable("connector_pending_specs")
      .set({ status: "superseded" })
      .where("connector_id", "=", connectorId)
      .where("status", "=", "pending")
      .execute();
    await recordDomainEvent(ctx, trx, actor.principal, {
      action: "connector.spec_promoted",
      orgId: row.org_id,
      projectId: row.project_id,
      targetType: "connector",
      targetId: connectorId,
      details: {
        pendingSpecId: specId,
        version: row.version + 1,
        toolCount: tools.length,
        promotedBy: actor.principal.id,
      },
      requestId: actor.requestId,
    });
    return { connector: toConnector(updated), pendingSpec: toPendingSpec(promoted) };
  });
  runtime.announce(result.connector.projectId);
  return result;
}

/** Re-discovers connectors whose schedule is due (into pending specs only); one replica per row. */
export async function runScheduledDiscoveries(ctx: ConnectionsContext, runtime: ConnectorRuntime): Promise<number> {
  const due = await ctx.db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom("connectors")
      .select("id")
      .where("next_discovery_at", "<=", new Date())
      .orderBy("next_discovery_at")
      .limit(10)
      .forUpdate()
      .skipLocked()
      .execute();
    if (rows.length) {
      // Claimed for an hour: another replica will not take them while this one works.
      await trx
        .updateTable("connectors")
        .set({ next_discovery_at: new Date(Date.now() + 3_600_000) })
        .where(
          "id",
          "in",
          rows.map((r) => r.id),
        )
        .execute();
    }
    return rows.map((r) => r.id);
  });
  for (const id of due) {
    const row = await getConnectorRow(ctx.db, id).catch(() => undefined);
    if (row) await discoverAgain(ctx, runtime, row, undefined).catch(() => {});
  }
  return due.length;
}
