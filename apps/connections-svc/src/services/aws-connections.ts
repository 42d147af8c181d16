import { type AwsConnection, redactUrlCredentials } from "@agentplane/contracts";
import { countRows } from "@agentplane/db";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { notFound, ProblemError } from "@agentplane/problem-details";
import { type Caller, enforceObjectLimit, type ProjectCaller } from "@agentplane/service-kit";
import { FetchRefusedError } from "@agentplane/service-kit/outbound";
import type { Selectable } from "kysely";
import type { ConnectionsContext } from "../context.ts";
import type { AwsConnectionsTable } from "../db/schema/aws.ts";
import { projectHasCredential } from "./governance.ts";
import { prefixedId } from "./ids.ts";
import { jsonb } from "./jsonb.ts";
import { perContext, RowCache } from "./row-cache.ts";

export type AwsConnectionRow = Selectable<AwsConnectionsTable>;

export function serializeAwsConnection(row: AwsConnectionRow): AwsConnection {
  return {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    credentialId: row.credential_id,
    defaultRegion: row.default_region,
    // Stored before such URLs were refused, a credential in an override's query is not shown.
    endpoints: Object.fromEntries(Object.entries(row.endpoints ?? {}).map(([k, v]) => [k, redactUrlCredentials(v)])),
    labels: row.labels ?? {},
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function loadAwsConnection(ctx: ConnectionsContext, id: string): Promise<AwsConnectionRow | undefined> {
  return ctx.db.selectFrom("aws_connections").selectAll().where("id", "=", id).executeTakeFirst();
}

/** What authorizing on an AWS connection asks: its project, answering 404 in the connection's name. */
export function awsConnectionScope(connection: AwsConnectionRow): { projectId: string; resource: string } {
  return { projectId: connection.project_id, resource: `AWS connection ${connection.id}` };
}

/** The connection rows the proxy reads on every request (see RowCache for staleness). */
export const proxiedAwsConnections = perContext(
  (ctx) => new RowCache<AwsConnectionRow>((id) => loadAwsConnection(ctx, id)),
);

/** A connection by id, 404 when there is none; `cached`: from the proxy's short-lived cache (see RowCache). */
export async function findAwsConnection(
  ctx: ConnectionsContext,
  connectionId: string,
  options: { cached?: boolean } = {},
): Promise<AwsConnectionRow> {
  const connection = options.cached
    ? await proxiedAwsConnections(ctx).get(connectionId)
    : await loadAwsConnection(ctx, connectionId);
  if (!connection) throw notFound("AWS connection", connectionId);
  return connection;
}

/**
 * Endpoint overrides that name an address the outbound policy refuses (loopback, metadata, private
 * ranges not in `CONNECTOR_ALLOWED_HOSTS`) are a 400 when set; names are checked at each call, as
 * their addresses can change.
 */
function checkEndpoints(ctx: ConnectionsContext, endpoints: Record<string, string> | undefined): void {
  const errors: Array<{ pointer: string; message: string }> = [];
  for (const [service, url] of Object.entries(endpoints ?? {})) {
    try {
      ctx.outbound.checkUrl(url);
    } catch (err) {
      if (!(err instanceof FetchRefusedError)) throw err;
      errors.push({ pointer: `/endpoints/${service}`, message: err.message });
    }
  }
  if (errors.length) {
    throw new ProblemError("bad-request", {
      detail: `Endpoint overrides must be reachable under the outbound address policy: ${errors.map((e) => e.message).join("; ")}`,
      errors,
    });
  }
}

/** A connection signs with its own project's AWS credential only; anything else is a 400. */
async function checkCredential(ctx: ConnectionsContext, projectId: string, credentialId: string): Promise<void> {
  if (await projectHasCredential(ctx, projectId, credentialId, ["aws-keys", "aws-role"])) return;
  throw new ProblemError("bad-request", {
    detail: `Credential ${credentialId} is not an aws-keys or aws-role credential of this project`,
    errors: [{ pointer: "/body/credentialId", message: "no AWS credential with this id in this project" }],
  });
}

type Input = {
  name?: string | undefined;
  description?: string | undefined;
  credentialId?: string | undefined;
  defaultRegion?: string | undefined;
  endpoints?: Record<string, string> | undefined;
  labels?: Record<string, string> | undefined;
};

export async function createAwsConnection(
  ctx: ConnectionsContext,
  caller: ProjectCaller,
  input: Input & { name: string; credentialId: string; defaultRegion: string },
): Promise<AwsConnection> {
  checkEndpoints(ctx, input.endpoints);
  await checkCredential(ctx, caller.projectId, input.credentialId);
  const row = await withDomainEvents(ctx, async (trx) => {
    await enforceObjectLimit(trx, ctx.config.objectLimits, {
      kind: "aws-connections",
      holder: "project",
      holderId: caller.projectId,
      count: () => countRows(trx.selectFrom("aws_connections").where("project_id", "=", caller.projectId)),
    });
    const inserted = await trx
      .insertInto("aws_connections")
      .values({
        id: prefixedId("awc"),
        org_id: caller.orgId,
        project_id: caller.projectId,
        name: input.name,
        description: input.description ?? null,
        credential_id: input.credentialId,
        default_region: input.defaultRegion,
        endpoints: jsonb(input.endpoints ?? {}),
        labels: jsonb(input.labels ?? {}),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "aws_connection.created",
      orgId: caller.orgId,
      projectId: caller.projectId,
      targetType: "aws_connection",
      targetId: inserted.id,
      details: { name: input.name, credentialId: input.credentialId },
      requestId: caller.requestId,
    });
    return inserted;
  });
  return serializeAwsConnection(row);
}

export async function listAwsConnections(
  ctx: ConnectionsContext,
  caller: ProjectCaller,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: AwsConnection[]; nextCursor?: string }> {
  let q = ctx.db.selectFrom("aws_connections").selectAll().where("project_id", "=", caller.projectId);
  if (query.cursor) q = q.where("id", ">", query.cursor);
  const rows = await q
    .orderBy("id")
    .limit(query.limit + 1)
    .execute();
  const page = rows.slice(0, query.limit);
  return {
    items: page.map(serializeAwsConnection),
    ...(rows.length > query.limit ? { nextCursor: page[page.length - 1]!.id } : {}),
  };
}

export async function updateAwsConnection(
  ctx: ConnectionsContext,
  caller: Caller,
  { connection, ...input }: { connection: AwsConnectionRow } & Input,
): Promise<AwsConnection> {
  checkEndpoints(ctx, input.endpoints);
  if (input.credentialId !== undefined) await checkCredential(ctx, connection.project_id, input.credentialId);
  const row = await withDomainEvents(ctx, async (trx) => {
    const updated = await trx
      .updateTable("aws_connections")
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.credentialId !== undefined ? { credential_id: input.credentialId } : {}),
        ...(input.defaultRegion !== undefined ? { default_region: input.defaultRegion } : {}),
        ...(input.endpoints !== undefined ? { endpoints: jsonb(input.endpoints) } : {}),
        ...(input.labels !== undefined ? { labels: jsonb(input.labels) } : {}),
        updated_at: new Date(),
      })
      .where("id", "=", connection.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "aws_connection.updated",
      orgId: connection.org_id,
      projectId: connection.project_id,
      targetType: "aws_connection",
      targetId: connection.id,
      details: { fields: Object.keys(input) },
      requestId: caller.requestId,
    });
    return updated;
  });
  proxiedAwsConnections(ctx).forget(connection.id);
  return serializeAwsConnection(row);
}

export async function deleteAwsConnection(
  ctx: ConnectionsContext,
  caller: Caller,
  { connection }: { connection: AwsConnectionRow },
): Promise<void> {
  await withDomainEvents(ctx, async (trx) => {
    await trx.deleteFrom("aws_connections").where("id", "=", connection.id).execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "aws_connection.deleted",
      orgId: connection.org_id,
      projectId: connection.project_id,
      targetType: "aws_connection",
      targetId: connection.id,
      requestId: caller.requestId,
    });
  });
  proxiedAwsConnections(ctx).forget(connection.id);
}

/**
 * The upstream endpoint of a service for a connection: its override, else the public regional one,
 * built with the URL API from a service and region already held to their patterns (never pasted
 * into a URL string, so no character of them can move the request to another host).
 */
export function awsEndpoint(connection: AwsConnectionRow, service: string, region: string): URL {
  // An own key only: `constructor` is a service name too, and every object inherits one.
  const endpoints = connection.endpoints ?? {};
  const override = Object.hasOwn(endpoints, service) ? endpoints[service] : undefined;
  if (override) return new URL(override);
  const url = new URL("https://amazonaws.com/");
  const host = `${service}.${region}.amazonaws.com`;
  url.hostname = host;
  if (url.hostname !== host) {
    throw new ProblemError("bad-request", { detail: `No AWS endpoint for service ${service} in region ${region}` });
  }
  return url;
}
