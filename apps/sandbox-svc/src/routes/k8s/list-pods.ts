import { k8sListPodsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toPod } from "../../services/k8s-pods.ts";
import { listSandboxes } from "../../services/sandboxes.ts";

export function registerK8sListPods(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(k8sListPodsRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandboxes:read", { projectId });
    const page = await listSandboxes(ctx, projectId, { limit: 500 });
    return c.json(
      { apiVersion: "v1" as const, kind: "PodList" as const, metadata: {}, items: page.items.map(toPod) },
      200,
    );
  });
}
