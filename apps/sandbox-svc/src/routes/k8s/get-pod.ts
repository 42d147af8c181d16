import { k8sGetPodRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toPod } from "../../services/k8s-pods.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";

export function registerK8sGetPod(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(k8sGetPodRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandboxes:read", { projectId, sandboxId });
    return c.json(toPod(await getSandboxRow(ctx, projectId, sandboxId)), 200);
  });
}
