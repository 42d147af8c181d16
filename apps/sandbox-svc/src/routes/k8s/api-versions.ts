import { k8sContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";

/** `GET /k8s/api`: the API versions Kubernetes clients read before they act. */
export function registerK8sApiVersions(app: ServiceApp): void {
  app.openapi(k8sContracts.k8sGetApiVersions, (c) => c.json({ kind: "APIVersions" as const, versions: ["v1"] }, 200));
}
