import { QuerySandboxesRequest, type QuerySandboxesResponse, SANDBOX_INTERNAL } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { RouteDeps } from "../helpers.ts";

const MAX_ITEMS = 10_000;

/**
 * The sandboxes of an organization (optionally one project or one sandbox) for governance's
 * effective policy and drift audit; only service principals may ask. Env values never leave here.
 */
export function registerQuerySandboxes(app: ServiceApp, deps: RouteDeps): void {
  app.post(SANDBOX_INTERNAL.querySandboxes, async (c) => {
    if (requirePrincipal(c).type !== "service") {
      throw new ProblemError("forbidden", { detail: "Internal endpoint for services" });
    }
    const parsed = QuerySandboxesRequest.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      throw new ProblemError("validation-failed", {
        detail: "Expected {orgId, projectId?, sandboxId?}",
        errors: parsed.error.issues.map((i) => ({ pointer: `/body/${i.path.join("/")}`, message: i.message })),
      });
    }
    const { orgId, projectId, sandboxId } = parsed.data;
    let q = deps.db
      .selectFrom("sandboxes")
      .select(["id", "org_id", "project_id", "name", "image", "labels", "ports", "state", "created_at"])
      .where("org_id", "=", orgId);
    if (projectId) q = q.where("project_id", "=", projectId);
    if (sandboxId) q = q.where("id", "=", sandboxId);
    const rows = await q.orderBy("id").limit(MAX_ITEMS).execute();
    const body: QuerySandboxesResponse = {
      items: rows.map((row) => ({
        id: row.id,
        orgId: row.org_id as string,
        projectId: row.project_id,
        name: row.name,
        image: row.image,
        labels: row.labels,
        ports: row.ports.map((p) => ({ port: p.port, visibility: p.visibility })),
        status: row.state,
        createdAt: new Date(row.created_at).toISOString(),
      })),
    };
    return c.json(body, 200);
  });
}
