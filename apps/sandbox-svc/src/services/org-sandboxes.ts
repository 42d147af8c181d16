import type { QuerySandboxesRequest, QuerySandboxesResponse } from "@agentplane/contracts";
import type { SandboxDeps } from "./context.ts";

const MAX_ITEMS = 10_000;

/**
 * The sandboxes of an organization (optionally one project or one sandbox), as governance reads
 * them for the effective policy and the drift audit. Env values are not selected.
 */
export async function querySandboxesOfOrg(
  deps: SandboxDeps,
  { orgId, projectId, sandboxId }: QuerySandboxesRequest,
): Promise<QuerySandboxesResponse> {
  let q = deps.db
    .selectFrom("sandboxes")
    .select(["id", "org_id", "project_id", "name", "image", "labels", "ports", "state", "created_at"])
    .where("org_id", "=", orgId);
  if (projectId) q = q.where("project_id", "=", projectId);
  if (sandboxId) q = q.where("id", "=", sandboxId);
  const rows = await q.orderBy("id").limit(MAX_ITEMS).execute();
  return {
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
}
