import { type Cluster, newId, type Principal } from "@agentplane/contracts";
import { countRows } from "@agentplane/db";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { notFound, ProblemError } from "@agentplane/problem-details";
import { type Caller, enforceObjectLimit, type ProjectCaller } from "@agentplane/service-kit";
import type { Selectable } from "kysely";
import type { ConnectionsContext } from "../context.ts";
import type { ClustersTable } from "../db/schema/clusters.ts";
import { jsonb } from "./jsonb.ts";
import { perContext, RowCache } from "./row-cache.ts";
import { newTunnelToken, parseTunnelToken, secretMatches } from "./tunnel-tokens.ts";

export type ClusterRow = Selectable<ClustersTable>;

export function serializeCluster(row: ClusterRow, now = Date.now()): Cluster {
  const connected = row.tunnel_expires_at !== null && row.tunnel_expires_at.getTime() > now;
  const status = connected ? "connected" : row.first_connected_at ? "disconnected" : "pending";
  const since = connected
    ? row.first_connected_at
    : status === "disconnected"
      ? (row.disconnected_at ?? row.tunnel_expires_at ?? row.last_heartbeat_at)
      : null;
  return {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    labels: row.labels ?? {},
    status,
    ...(since ? { statusSince: since.toISOString() } : {}),
    ...(row.last_heartbeat_at ? { lastHeartbeatAt: row.last_heartbeat_at.toISOString() } : {}),
    ...(row.relay_version ? { relayVersion: row.relay_version } : {}),
    ...(row.kubernetes_version ? { kubernetesVersion: row.kubernetes_version } : {}),
    ...(connected && row.tunnel_replica ? { replica: row.tunnel_replica } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** A cluster by id, 404 when there is none; `cached`: from the proxy's short-lived cache (see RowCache). */
export async function findCluster(
  ctx: ConnectionsContext,
  clusterId: string,
  options: { cached?: boolean } = {},
): Promise<ClusterRow> {
  const cluster = options.cached
    ? await proxiedClusters(ctx).get(clusterId)
    : await ctx.db.selectFrom("clusters").selectAll().where("id", "=", clusterId).executeTakeFirst();
  if (!cluster) throw notFound("Cluster", clusterId);
  return cluster;
}

/** What authorizing on a cluster asks: its project, answering 404 in the cluster's name. */
export function clusterScope(cluster: ClusterRow): { projectId: string; resource: string } {
  return { projectId: cluster.project_id, resource: `Cluster ${cluster.id}` };
}

/** The cluster rows the proxy reads on every request (see RowCache for staleness). */
export const proxiedClusters = perContext(
  (ctx) =>
    new RowCache<ClusterRow>((id) => ctx.db.selectFrom("clusters").selectAll().where("id", "=", id).executeTakeFirst()),
);

export async function createCluster(
  ctx: ConnectionsContext,
  caller: ProjectCaller,
  input: { name: string; description?: string | undefined; labels?: Record<string, string> | undefined },
): Promise<{ cluster: Cluster; tunnelToken: string }> {
  const token = newTunnelToken();
  const row = await withDomainEvents(ctx, async (trx) => {
    await enforceObjectLimit(trx, ctx.config.objectLimits, {
      kind: "clusters",
      holder: "project",
      holderId: caller.projectId,
      count: () => countRows(trx.selectFrom("clusters").where("project_id", "=", caller.projectId)),
    });
    const inserted = await trx
      .insertInto("clusters")
      .values({
        id: newId("cluster"),
        org_id: caller.orgId,
        project_id: caller.projectId,
        name: input.name,
        description: input.description ?? null,
        labels: jsonb(input.labels ?? {}),
        tunnel_token_id: token.id,
        tunnel_token_hash: token.hash,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "cluster.registered",
      orgId: caller.orgId,
      projectId: caller.projectId,
      targetType: "cluster",
      targetId: inserted.id,
      details: { name: input.name },
      requestId: caller.requestId,
    });
    return inserted;
  });
  return { cluster: serializeCluster(row), tunnelToken: token.token };
}

export async function listClusters(
  ctx: ConnectionsContext,
  caller: ProjectCaller,
  query: { limit: number; cursor?: string | undefined; status?: Cluster["status"] | undefined },
): Promise<{ items: Cluster[]; nextCursor?: string }> {
  const now = new Date();
  let q = ctx.db.selectFrom("clusters").selectAll().where("project_id", "=", caller.projectId);
  if (query.cursor) q = q.where("id", ">", query.cursor);
  if (query.status === "connected") q = q.where("tunnel_expires_at", ">", now);
  if (query.status === "pending" || query.status === "disconnected") {
    q = q
      .where((eb) => eb.or([eb("tunnel_expires_at", "is", null), eb("tunnel_expires_at", "<=", now)]))
      .where("first_connected_at", query.status === "pending" ? "is" : "is not", null);
  }
  const rows = await q
    .orderBy("id")
    .limit(query.limit + 1)
    .execute();
  const page = rows.slice(0, query.limit);
  return {
    items: page.map((r) => serializeCluster(r, now.getTime())),
    ...(rows.length > query.limit ? { nextCursor: page[page.length - 1]!.id } : {}),
  };
}

export async function updateCluster(
  ctx: ConnectionsContext,
  caller: Caller,
  {
    cluster,
    ...input
  }: { cluster: ClusterRow } & {
    name?: string | undefined;
    description?: string | undefined;
    labels?: Record<string, string> | undefined;
  },
): Promise<Cluster> {
  const row = await withDomainEvents(ctx, async (trx) => {
    const updated = await trx
      .updateTable("clusters")
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.labels !== undefined ? { labels: jsonb(input.labels) } : {}),
        updated_at: new Date(),
      })
      .where("id", "=", cluster.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "cluster.updated",
      orgId: cluster.org_id,
      projectId: cluster.project_id,
      targetType: "cluster",
      targetId: cluster.id,
      details: { fields: Object.keys(input) },
      requestId: caller.requestId,
    });
    return updated;
  });
  proxiedClusters(ctx).forget(cluster.id);
  return serializeCluster(row);
}

export async function deleteCluster(
  ctx: ConnectionsContext,
  caller: Caller,
  { cluster }: { cluster: ClusterRow },
): Promise<void> {
  await withDomainEvents(ctx, async (trx) => {
    await trx.deleteFrom("clusters").where("id", "=", cluster.id).execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "cluster.deleted",
      orgId: cluster.org_id,
      projectId: cluster.project_id,
      targetType: "cluster",
      targetId: cluster.id,
      requestId: caller.requestId,
    });
  });
  proxiedClusters(ctx).forget(cluster.id);
}

/** Replaces the tunnel token (the old one stops opening tunnels at once) and returns the new one. */
export async function rotateTunnelToken(
  ctx: ConnectionsContext,
  caller: Caller,
  { cluster }: { cluster: ClusterRow },
): Promise<{ token: string; tokenId: string; previousTokenId: string; rotatedAt: Date }> {
  const token = newTunnelToken();
  const rotatedAt = new Date();
  await withDomainEvents(ctx, async (trx) => {
    await trx
      .updateTable("clusters")
      .set({ tunnel_token_id: token.id, tunnel_token_hash: token.hash, updated_at: rotatedAt })
      .where("id", "=", cluster.id)
      .execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "cluster.tunnel_token_rotated",
      orgId: cluster.org_id,
      projectId: cluster.project_id,
      targetType: "cluster",
      targetId: cluster.id,
      details: { previousTokenId: cluster.tunnel_token_id, tokenId: token.id },
      requestId: caller.requestId,
    });
  });
  proxiedClusters(ctx).forget(cluster.id);
  return { token: token.token, tokenId: token.id, previousTokenId: cluster.tunnel_token_id, rotatedAt };
}

/** The cluster principal a relay's tunnel token stands for; 401 when the token is not a current one. */
export async function resolveTunnelTokenPrincipal(ctx: ConnectionsContext, presented: string): Promise<Principal> {
  const token = parseTunnelToken(presented);
  const row = token
    ? await ctx.db
        .selectFrom("clusters")
        .select(["id", "org_id", "project_id", "tunnel_token_hash"])
        .where("tunnel_token_id", "=", token.id)
        .executeTakeFirst()
    : undefined;
  if (!token || !row || !secretMatches(token.secret, row.tunnel_token_hash)) {
    throw new ProblemError("unauthenticated", { detail: "The token is not valid" });
  }
  return {
    type: "cluster",
    id: token.id,
    displayName: `relay of ${row.id}`,
    orgId: row.org_id,
    projectId: row.project_id,
  };
}
