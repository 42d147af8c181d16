import { k8sGetApiResourcesRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";

/** `GET /k8s/api/v1`: the resources of the `/k8s` surface (pods, read-only, with exec and attach). */
export function registerK8sGetApiResources(app: ServiceApp): void {
  app.openapi(k8sGetApiResourcesRoute, (c) =>
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
