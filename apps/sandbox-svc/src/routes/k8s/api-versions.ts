import { k8sGetApiVersionsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { aggregatedDiscoveryAnswer } from "./discovery-answer.ts";

/** `GET /k8s/api`: the API versions Kubernetes clients read before they act (or the aggregated form). */
export function registerK8sGetApiVersions(app: ServiceApp): void {
  app.openapi(k8sGetApiVersionsRoute, (c) => {
    const aggregated = aggregatedDiscoveryAnswer(c, "api");
    if (aggregated) return c.json(aggregated.body, 200, aggregated.headers);
    return c.json({ kind: "APIVersions" as const, versions: ["v1"] }, 200);
  });
}
