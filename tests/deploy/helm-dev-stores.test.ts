import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type K8sObject, parseObjects, renderChart, VALUES_DIR } from "./chart.ts";

// The dev Postgres trusts every connection and the dev Redis has no password: only this release's
// Pods that use them may reach them, not every Pod of the cluster, nor the egress proxy through
// which sandboxes connect out.

describe("the agentplane chart's development stores", () => {
  const list = parseObjects(renderChart(join(VALUES_DIR, "dev.yaml")));

  it.each([
    ["postgres", 5432],
    ["redis", 6379],
  ] as const)("admit only the release's own Pods to %s", (store, port) => {
    const policy = list.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === `agentplane-${store}`) as
      | (K8sObject & { spec: unknown })
      | undefined;
    expect(policy?.spec).toEqual({
      podSelector: {
        matchLabels: { "app.kubernetes.io/instance": "agentplane", "app.kubernetes.io/component": store },
      },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            {
              podSelector: {
                matchLabels: { "app.kubernetes.io/instance": "agentplane" },
                // The agent runtime keeps its own SQLite database and runs its model's commands; the
                // egress proxy opens no database and carries sandboxes' connections.
                matchExpressions: [
                  { key: "app.kubernetes.io/component", operator: "NotIn", values: ["runtime", "egress"] },
                ],
              },
            },
          ],
          ports: [{ protocol: "TCP", port }],
        },
      ],
    });
    // Every service that connects carries the label the policy admits.
    for (const deployment of list.filter((o) => o.kind === "Deployment")) {
      const labels = (deployment.spec as { template: { metadata: { labels: Record<string, string> } } }).template
        .metadata.labels;
      expect(labels["app.kubernetes.io/instance"], deployment.metadata.name).toBe("agentplane");
    }
  });

  it("are not rendered, nor their policies, with external stores", () => {
    const external = parseObjects(renderChart(join(VALUES_DIR, "external.yaml")));
    expect(external.filter((o) => /-(postgres|redis)$/.test(o.metadata.name))).toEqual([]);
  });
});
