import { k8sGetApiVersionsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";

/** `GET /k8s/api`: the API versions Kubernetes clients read before they act. */
export function registerK8sGetApiVersions(app: ServiceApp): void {
  app.openapi(k8sGetApiVersionsRoute, (c) => c.json({ kind: "APIVersions" as const, versions: ["v1"] }, 200));
}
