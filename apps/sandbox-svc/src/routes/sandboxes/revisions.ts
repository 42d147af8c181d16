import { SandboxSpecSchema, sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { getSandboxRow, listRevisions } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerListSandboxRevisions(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.listSandboxRevisions, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId, sandboxId);
    await getSandboxRow(deps, projectId, sandboxId);
    const rows = await listRevisions(deps, sandboxId);
    const items = rows.map((r) => ({
      sandboxId: r.sandbox_id,
      revision: r.revision,
      spec: SandboxSpecSchema.parse(r.spec),
      author: { type: r.author_type, id: r.author_id },
      reason: r.reason,
      createdAt: new Date(r.created_at).toISOString(),
    }));
    return c.json({ items }, 200);
  });
}
