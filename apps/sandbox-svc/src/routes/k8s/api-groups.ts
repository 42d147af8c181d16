import { k8sGetApiGroupsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { aggregatedDiscoveryAnswer } from "./discovery-answer.ts";

/** `GET /k8s/apis`: no named API groups (or the aggregated form, with none). */
export function registerK8sGetApiGroups(app: ServiceApp): void {
  app.openapi(k8sGetApiGroupsRoute, (c) => {
    const aggregated = aggregatedDiscoveryAnswer(c, "apis");
    if (aggregated) return c.json(aggregated.body, 200, aggregated.headers);
    return c.json({ kind: "APIGroupList" as const, apiVersion: "v1" as const, groups: [] }, 200);
  });
}
