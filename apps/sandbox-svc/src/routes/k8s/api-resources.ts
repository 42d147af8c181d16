import { k8sGetApiResourcesRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { coreResourceList } from "../../services/k8s-discovery.ts";

/** `GET /k8s/api/v1`: the resources of the `/k8s` surface (pods, read-only, with exec and attach). */
export function registerK8sGetApiResources(app: ServiceApp): void {
  app.openapi(k8sGetApiResourcesRoute, (c) => c.json(coreResourceList(), 200));
}
