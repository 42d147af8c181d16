import {
  newId,
  orgRoleAtLeast,
  PROJECT_LABELS_TOPIC,
  type Project,
  type ProjectLabelsChanged,
} from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller, ProjectCaller } from "@agentplane/service-kit";
import { type Kysely, sql } from "kysely";
import { actorOf } from "../authz/local-authorizer.ts";
import type { TenancyContext } from "../context.ts";
import type { TenancyDatabase } from "../db/schema.ts";
import { currentPublicKey, insertCurrentKey, publishedKeys, rotateKeys } from "../keys/signing-keys.ts";
import { enforceOrgLimit } from "./object-limits.ts";
import { changedFields, iso, page, toProject } from "./serialize.ts";

/** A labels object as a jsonb value that both drivers store as an object (a bare string parameter is stored as a JSON string). */
const labelsJson = (labels: Record<string, string>) => sql<string>`${JSON.stringify(labels)}::text::jsonb`;

/** Publishes a project's labels with the change (governance selects projects by them). */
function labelsChanged(
  ctx: TenancyContext,
  trx: Kysely<TenancyDatabase>,
  event: ProjectLabelsChanged,
): Promise<string> {
  return ctx.outbox.enqueue(trx as unknown as Kysely<never>, PROJECT_LABELS_TOPIC, event);
}

/** Creates the project with its first signing key; the creator gets a direct admin grant. */
export async function createProject(
  ctx: TenancyContext,
  caller: Caller,
  input: { name: string; description?: string | undefined; labels?: Record<string, string> | undefined },
): Promise<Project> {
  const { orgId, principal } = caller;
  const actor = actorOf(principal);
  if (!actor) throw new ProblemError("forbidden", { detail: "Only users and their API tokens create projects" });
  if (actor.projectId)
    throw new ProblemError("forbidden", { detail: "A project-restricted token cannot create projects" });
  const row = await withDomainEvents(ctx, async (trx) => {
    await enforceOrgLimit(ctx, trx, "projects", orgId);
    const project = await trx
      .insertInto("projects")
      .values({
        id: newId("project"),
        org_id: orgId,
        name: input.name,
        description: input.description ?? null,
        labels: labelsJson(input.labels ?? {}),
        updated_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (input.labels && Object.keys(input.labels).length > 0) {
      await labelsChanged(ctx, trx, { orgId, projectId: project.id, labels: input.labels });
    }
    await trx
      .insertInto("project_members")
      .values({ project_id: project.id, user_id: actor.userId, role: "admin" })
      .execute();
    await insertCurrentKey(trx, ctx.config.secretKey, project.id);
    await recordDomainEvent(ctx, trx, principal, {
      action: "project.created",
      orgId,
      projectId: project.id,
      targetType: "project",
      targetId: project.id,
      details: { name: input.name },
      requestId: caller.requestId,
    });
    return project;
  });
  const access = await ctx.authorizer.projectAccess(principal, row.id);
  return toProject(row, access?.projectRole);
}

export async function listProjects(
  ctx: TenancyContext,
  caller: Caller,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: Project[]; nextCursor?: string }> {
  const { principal } = caller;
  let q = ctx.db
    .selectFrom("projects")
    .selectAll()
    .where("org_id", "=", caller.orgId)
    .orderBy("id")
    .limit(query.limit + 1);
  // Every member sees every project of the org (at least as viewer), except project-restricted tokens.
  if (principal.type === "api_token" && principal.projectId) q = q.where("id", "=", principal.projectId);
  if (query.cursor) q = q.where("id", ">", query.cursor);
  const result = page(await q.execute(), query.limit);
  // The caller's role on each, as getProject answers it: the console's "Your role" column and what
  // it lets the caller do there (one query for the whole page).
  const access = await ctx.authorizer.projectAccessMany(
    principal,
    result.items.map((r) => r.id),
  );
  const items = result.items.map((r) => toProject(r, access.get(r.id)?.projectRole));
  return {
    items,
    ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}),
  };
}

/** The caller's project, with the caller's role in it. */
export async function getProject(ctx: TenancyContext, caller: ProjectCaller): Promise<Project> {
  const { projectId } = caller;
  const row = await ctx.db.selectFrom("projects").selectAll().where("id", "=", projectId).executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
  return toProject(row, caller.projectRole);
}

export async function updateProject(
  ctx: TenancyContext,
  caller: ProjectCaller,
  input: { name?: string | undefined; description?: string | undefined; labels?: Record<string, string> | undefined },
): Promise<Project> {
  const { projectId } = caller;
  const row = await withDomainEvents(ctx, async (trx) => {
    const current = await trx
      .selectFrom("projects")
      .selectAll()
      .where("id", "=", projectId)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
    const fields = changedFields(input, { ...current, labels: current.labels ?? {} }, "name", "description", "labels");
    // A patch that changes nothing (an empty one, or the values the project has) leaves the project
    // as it is: no event, and updatedAt keeps the time of the last real change.
    if (fields.length === 0) return current;
    // Labels decide which organization policy bindings reach the project (projectSelector): a
    // project admin who could change them would take the project out of the organization's policies.
    if (fields.includes("labels") && !(caller.orgRole && orgRoleAtLeast(caller.orgRole, "admin"))) {
      throw new ProblemError("forbidden", {
        detail: "Changing a project's labels needs the organization's admin role: they select organization policies",
      });
    }
    const row = await trx
      .updateTable("projects")
      .set({
        ...(fields.includes("name") ? { name: input.name } : {}),
        ...(fields.includes("description") ? { description: input.description } : {}),
        ...(fields.includes("labels") && input.labels ? { labels: labelsJson(input.labels) } : {}),
        updated_at: sql<Date>`now()`,
      })
      .where("id", "=", projectId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
    if (fields.includes("labels") && input.labels) {
      await labelsChanged(ctx, trx, { orgId: row.org_id, projectId, labels: input.labels });
    }
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "project.updated",
      orgId: row.org_id,
      projectId,
      targetType: "project",
      targetId: projectId,
      details: { fields },
      requestId: caller.requestId,
    });
    return row;
  });
  return toProject(row, caller.projectRole);
}

export async function deleteProject(ctx: TenancyContext, caller: ProjectCaller): Promise<void> {
  const { projectId } = caller;
  await withDomainEvents(ctx, async (trx) => {
    const row = await trx
      .deleteFrom("projects")
      .where("id", "=", projectId)
      .returning(["org_id", "name"])
      .executeTakeFirst();
    if (!row) return;
    await labelsChanged(ctx, trx, { orgId: row.org_id, projectId, labels: null });
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "project.deleted",
      orgId: row.org_id,
      projectId,
      targetType: "project",
      targetId: projectId,
      details: { name: row.name },
      requestId: caller.requestId,
    });
  });
}

export async function rotateProjectKeys(ctx: TenancyContext, caller: ProjectCaller) {
  const { projectId } = caller;
  return withDomainEvents(ctx, async (trx) => {
    const result = await rotateKeys(trx, ctx.config.secretKey, projectId, ctx.config.keyRotationGraceSeconds);
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "project.keys_rotated",
      orgId: caller.orgId,
      projectId,
      targetType: "project",
      targetId: projectId,
      details: { kid: result.kid, previousKid: result.previousKid },
      requestId: caller.requestId,
    });
    return result;
  });
}

/** The project's current public signing key, as PEM and JWK. */
export async function getProjectPublicKey(ctx: TenancyContext, caller: ProjectCaller) {
  const { projectId } = caller;
  const key = await currentPublicKey(ctx.db, projectId);
  if (!key) throw new ProblemError("not-found", { detail: `Project ${projectId} has no signing key` });
  return { projectId, kid: key.kid, alg: "ES256" as const, pem: key.pem, jwk: key.jwk, createdAt: iso(key.createdAt) };
}

/** The project's published keys: the current one, and the previous one during its grace period. */
export async function getProjectJwks(ctx: TenancyContext, caller: ProjectCaller) {
  return { keys: await publishedKeys(ctx.db, caller.projectId) };
}
