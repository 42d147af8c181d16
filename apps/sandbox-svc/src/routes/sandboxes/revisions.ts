import { listSandboxRevisionsRoute, SandboxSpecSchema } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { listRevisions } from "../../services/revisions.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";
import { archivesOf } from "../../services/workspace-archives.ts";

export function registerListSandboxRevisions(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(listSandboxRevisionsRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandboxes:read", { projectId, sandboxId });
    await getSandboxRow(ctx, projectId, sandboxId);
    const rows = await listRevisions(ctx, sandboxId);
    const archives = await archivesOf(ctx, sandboxId);
    const items = rows.map((r) => ({
      sandboxId: r.sandbox_id,
      revision: r.revision,
      spec: SandboxSpecSchema.parse(r.spec),
      author: { type: r.author_type, id: r.author_id, ...(r.author_name ? { name: r.author_name } : {}) },
      reason: r.reason,
      createdAt: new Date(r.created_at).toISOString(),
      workspace: archives.get(r.revision) ?? null,
    }));
    return c.json({ items }, 200);
  });
}
