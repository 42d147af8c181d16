import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type K8sObject, parseObjects, renderChart, VALUES_DIR } from "./chart.ts";

// The agent runtime runs the commands its model chooses in its own Pod (no bubblewrap under the
// restricted profile), on input from outside (webhooks, what a prompt reads): they must not reach
// the cloud metadata address (the node's cloud credentials), nor the dev stores that trust every
// connection. Everything else (its model provider, DNS, the gateway) stays reachable.

interface Peer {
  namespaceSelector?: unknown;
  podSelector?: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values: string[] }[];
  };
  ipBlock?: { cidr: string; except?: string[] };
}
interface Policy {
  spec: { policyTypes: string[]; egress?: { to?: Peer[] }[]; ingress?: { from?: Peer[] }[] };
}

const named = (list: K8sObject[], kind: string, name: string) =>
  list.find((o) => o.kind === kind && o.metadata.name === name) as unknown as Policy | undefined;

describe("the agent runtime's egress in the agentplane chart", () => {
  const list = parseObjects(renderChart(join(VALUES_DIR, "dev.yaml")));

  it("reaches Pods and the internet but never the link-local (cloud metadata) addresses", () => {
    const policy = named(list, "NetworkPolicy", "agentplane-runtime");
    expect(policy?.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    const peers = (policy?.spec.egress ?? []).flatMap((rule) => {
      expect(rule.to, "a rule without peers allows every destination").toBeDefined();
      return rule.to ?? [];
    });
    const blocks = peers.filter((p) => p.ipBlock).map((p) => p.ipBlock);
    expect(blocks).toEqual([
      { cidr: "0.0.0.0/0", except: ["169.254.0.0/16"] },
      { cidr: "::/0", except: ["fe80::/10", "fd00:ec2::254/128"] },
    ]);
    // Pods of any namespace (DNS, the gateway): a peer no link-local address belongs to.
    expect(peers.filter((p) => !p.ipBlock)).toEqual([{ namespaceSelector: {} }]);
  });

  it.each(["dev", "external"])(
    "keeps the egress proxy, which connects where sandboxes ask, from link-local addresses too (%s)",
    (values) => {
      const rendered = parseObjects(renderChart(join(VALUES_DIR, `${values}.yaml`)));
      const policy = named(rendered, "NetworkPolicy", "agentplane-egress") as unknown as Policy & {
        spec: { podSelector: { matchLabels: Record<string, string> } };
      };
      // It refuses private addresses itself; the policy holds should a check ever miss one.
      expect(policy?.spec.podSelector.matchLabels).toEqual({
        "app.kubernetes.io/instance": "agentplane",
        "app.kubernetes.io/component": "egress",
      });
      expect(policy.spec.policyTypes).toEqual(["Egress"]);
      expect(policy.spec.egress).toEqual(named(list, "NetworkPolicy", "agentplane-runtime")?.spec.egress);
      const off = parseObjects(
        renderChart(join(VALUES_DIR, `${values}.yaml`), ["--set", "services.egress.enabled=false"]),
      );
      expect(named(off, "NetworkPolicy", "agentplane-egress")).toBeUndefined();
    },
  );

  it("keeps the runtime out of the dev stores", () => {
    for (const store of ["postgres", "redis"]) {
      const from = named(list, "NetworkPolicy", `agentplane-${store}`)?.spec.ingress?.[0]?.from?.[0]?.podSelector;
      expect(from?.matchLabels).toEqual({ "app.kubernetes.io/instance": "agentplane" });
      expect(from?.matchExpressions).toEqual([
        { key: "app.kubernetes.io/component", operator: "NotIn", values: expect.arrayContaining(["runtime"]) },
      ]);
    }
  });
});
