import { k8sContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toPod } from "../../services/k8s-pods.ts";
import { listSandboxes } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerK8sListPods(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(k8sContracts.k8sListPods, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId);
    const page = await listSandboxes(deps, projectId, { limit: 500 });
    return c.json(
      { apiVersion: "v1" as const, kind: "PodList" as const, metadata: {}, items: page.items.map(toPod) },
      200,
    );
  });
}
