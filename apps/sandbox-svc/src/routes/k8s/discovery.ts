import { k8sContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";

/** `GET /k8s/api` and `/k8s/api/v1`: what Kubernetes clients read before they act. */
export function registerK8sDiscovery(app: ServiceApp): void {
  app.openapi(k8sContracts.k8sGetApiVersions, (c) => c.json({ kind: "APIVersions" as const, versions: ["v1"] }, 200));
  app.openapi(k8sContracts.k8sGetApiResources, (c) =>
    c.json(
      {
        kind: "APIResourceList" as const,
        groupVersion: "v1" as const,
        resources: [
          { name: "pods", namespaced: true, kind: "Pod", verbs: ["get", "list"] },
          { name: "pods/exec", namespaced: true, kind: "PodExecOptions", verbs: ["create", "get"] },
          { name: "pods/attach", namespaced: true, kind: "PodAttachOptions", verbs: ["create", "get"] },
        ],
      },
      200,
    ),
  );
}
