import { readFileSync } from "node:fs";
import { join } from "node:path";
import { restrictedViolations, validateKubeObject } from "@agentplane/testkit/kube";
import { describe, expect, it } from "vitest";
import { parseRelayEnv } from "../../apps/cluster-relay/src/config.ts";
import {
  type K8sObject,
  parseObjects,
  RELAY_GOLDEN_DIR,
  RELAY_VALUES_DIR,
  renderRelayChart,
  valueSets,
} from "./chart.ts";
import { helm, RELAY_CHART } from "./helm.ts";

const sets = valueSets(RELAY_VALUES_DIR);
const rendered = Object.fromEntries(
  sets.map((name) => [name, renderRelayChart(join(RELAY_VALUES_DIR, `${name}.yaml`))]),
) as Record<string, string>;
const objects = (name: string) => parseObjects(rendered[name] as string);
const only = (list: K8sObject[], kind: string) => {
  const found = list.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0] as K8sObject;
};

interface RelayPod {
  spec: {
    serviceAccountName: string;
    containers: { image: string; env: { name: string; value: string }[] }[];
    tolerations?: unknown[];
  };
}
const podOf = (list: K8sObject[]) => (only(list, "Deployment").spec as { template: RelayPod }).template;

describe("the agentplane-relay Helm chart (a customer's cluster)", () => {
  it.each(sets)("passes helm lint --strict with %s values", (name) => {
    const result = helm(["lint", "--strict", RELAY_CHART, "-f", join(RELAY_VALUES_DIR, `${name}.yaml`)]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it.each(sets)("renders %s as its golden file (rewrite: node tests/deploy/update-golden.ts)", (name) => {
    expect(rendered[name]).toBe(readFileSync(join(RELAY_GOLDEN_DIR, `${name}.yaml`), "utf8"));
  });

  it.each(sets)("renders only objects valid against the Kubernetes schemas (%s)", (name) => {
    for (const object of objects(name)) {
      expect(() => validateKubeObject(object), `${object.kind} ${object.metadata.name}`).not.toThrow();
    }
  });

  it("runs one relay, restricted, with settings the relay itself accepts", () => {
    for (const name of sets) {
      const list = objects(name);
      const deployment = only(list, "Deployment");
      // The tunnel token rotates on use: never two relays at once, not even during a rollout.
      expect(deployment.spec).toMatchObject({ replicas: 1, strategy: { type: "Recreate" } });
      const pod = podOf(list);
      expect(restrictedViolations(pod.spec as never)).toEqual([]);
      const env = Object.fromEntries((pod.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
      const parsed = parseRelayEnv(env);
      expect(parsed.CLUSTER_ID).toBe("cl_example");
      expect(parsed.TUNNEL_TOKEN_SECRET).toMatch(/^agentplane-relay\//);
      // It reaches the API server with its own service account, bound to the chosen ClusterRole.
      const binding = only(list, "ClusterRoleBinding") as unknown as {
        roleRef: { name: string };
        subjects: { name: string; namespace: string }[];
      };
      expect(binding.subjects).toEqual([
        { kind: "ServiceAccount", name: pod.spec.serviceAccountName, namespace: "agentplane-relay" },
      ]);
    }
    const full = objects("full");
    expect(podOf(full).spec.containers[0]?.image).toBe("registry.example.com/agentplane/relay:1.2.3");
    expect((only(full, "ClusterRoleBinding") as unknown as { roleRef: { name: string } }).roleRef.name).toBe(
      "agentplane-relay-readonly",
    );
    expect(podOf(objects("minimal")).spec.containers[0]?.image).toBe("ghcr.io/agentplane/agentplane-relay:0.1.0");
  });

  it("may touch only its own token Secret, and creates it only when asked, kept across upgrades", () => {
    const role = only(objects("full"), "Role") as unknown as { rules: unknown[] };
    expect(role.rules).toEqual([
      { apiGroups: [""], resources: ["secrets"], resourceNames: ["tunnel"], verbs: ["get", "update", "patch"] },
    ]);
    const env = Object.fromEntries(
      (podOf(objects("full")).spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
    );
    expect(env).toMatchObject({
      TUNNEL_TOKEN_SECRET: "agentplane-relay/tunnel",
      TUNNEL_TOKEN_SECRET_KEY: "tunnel-token",
    });
    const secret = only(objects("full"), "Secret") as unknown as {
      metadata: { name: string; annotations: Record<string, string> };
      stringData: Record<string, string>;
    };
    expect(secret.metadata.name).toBe("tunnel");
    expect(secret.metadata.annotations["helm.sh/resource-policy"]).toBe("keep");
    expect(secret.stringData).toEqual({ "tunnel-token": "apt_example" });
    expect(objects("minimal").filter((o) => o.kind === "Secret")).toEqual([]);
    // Nothing of the control plane comes with it.
    for (const kind of ["Namespace", "Service", "Job", "ConfigMap", "NetworkPolicy"]) {
      expect(objects("full").filter((o) => o.kind === kind)).toEqual([]);
    }
  });

  it("starts a relay with an http:// control plane only when insecureHttp says the network is trusted", () => {
    const envOf = (extra: string[]) => {
      const pod = podOf(
        parseObjects(
          renderRelayChart(join(RELAY_VALUES_DIR, "minimal.yaml"), [
            "--set",
            "agentplaneUrl=http://agentplane.example.com",
            ...extra,
          ]),
        ),
      );
      return Object.fromEntries((pod.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    };
    expect(() => parseRelayEnv(envOf([]))).toThrow(/AGENTPLANE_URL: plain http/);
    expect(parseRelayEnv(envOf(["--set", "insecureHttp=true"])).AGENTPLANE_URL).toBe("http://agentplane.example.com");
  });

  it.each([
    ["no cluster id", ["--set", "clusterId="], "/clusterId"],
    ["a URL that is not one", ["--set", "agentplaneUrl=agentplane.example.com"], "/agentplaneUrl"],
    ["a Secret to create without its token", ["--set", "tokenSecret.create=true"], "/tokenSecret/token"],
    ["an unknown setting", ["--set", "replicas=2"], "replicas"],
  ])("refuses %s through values.schema.json", (_name, args, pointer) => {
    const result = helm(["template", "relay", RELAY_CHART, "-f", join(RELAY_VALUES_DIR, "minimal.yaml"), ...args]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(pointer);
  });
});
