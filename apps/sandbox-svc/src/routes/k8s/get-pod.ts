import { k8sContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toPod } from "../../services/k8s-pods.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerK8sGetPod(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(k8sContracts.k8sGetPod, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId, sandboxId);
    return c.json(toPod(await getSandboxRow(deps, projectId, sandboxId)), 200);
  });
}
