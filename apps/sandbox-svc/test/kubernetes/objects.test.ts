import { type FakeKubeApiServer, restrictedViolations, validateKubeObject } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { kubeDriver, NS, runtimeSpec, startFakeKube } from "./fixture.ts";

describe("objects the kubernetes driver sends to the API server", () => {
  let fake: FakeKubeApiServer;
  let driver: KubernetesDriver;
  const spec = runtimeSpec({
    command: ["sleep", "60"],
    resources: { cpuMillicores: 250, memoryMiB: 512, diskMiB: 2048 },
  });
  beforeAll(async () => {
    fake = await startFakeKube();
    driver = kubeDriver(fake);
    await driver.start(spec);
  });
  afterAll(async () => {
    await driver?.close();
    await fake?.close();
  });

  // What the API server stored is what went over the wire (plus the server's own metadata and status).
  const stored = () => ({
    pod: fake.store.get("/pods", NS, spec.slug),
    claim: fake.store.get("/persistentvolumeclaims", NS, `${spec.slug}-workspace`),
    policy: fake.store.get("networking.k8s.io/networkpolicies", NS, spec.slug),
  });

  it("are valid against the Kubernetes schemas", () => {
    const { pod, claim, policy } = stored();
    for (const object of [pod, claim, policy]) expect(() => validateKubeObject(object as never)).not.toThrow();
    // The validator does refuse a broken object.
    const broken = structuredClone(pod) as unknown as { spec: { containers: { name: unknown }[] } };
    (broken.spec.containers[0] as { name: unknown }).name = 42;
    expect(() => validateKubeObject(broken as never)).toThrow();
  });

  it("run the Pod under the restricted profile with every limit, no token and the configured placement", () => {
    const pod = stored().pod as unknown as {
      spec: Record<string, unknown> & { containers: Record<string, unknown>[] };
    };
    expect(restrictedViolations(pod.spec as never)).toEqual([]);
    expect(pod.spec).toMatchObject({
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      serviceAccountName: "agentplane-sandbox",
      runtimeClassName: "gvisor",
      nodeSelector: { "agentplane.dev/pool": "sandboxes" },
      tolerations: [{ key: "sandboxes", operator: "Exists", effect: "NoSchedule" }],
    });
    expect(pod.spec.containers).toHaveLength(1);
    expect(pod.spec.containers[0]).toMatchObject({
      name: "sandbox",
      image: "docker.io/library/debian:12.12-slim",
      command: ["sleep", "60"],
      resources: { limits: { cpu: "250m", memory: "512Mi", "ephemeral-storage": "4096Mi" } },
    });
    expect(stored().claim?.spec).toMatchObject({ resources: { requests: { storage: "2048Mi" } } });
  });

  it("let traffic in only from sandbox-svc and out only to the egress proxy", () => {
    expect(stored().policy?.spec).toEqual({
      podSelector: { matchLabels: { "agentplane.dev/sandbox-id": spec.id } },
      policyTypes: ["Ingress", "Egress"],
      ingress: [
        {
          from: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "agentplane" } },
              podSelector: { matchLabels: { "app.kubernetes.io/component": "sandbox-svc" } },
            },
          ],
        },
      ],
      egress: [
        {
          to: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "agentplane" } },
              podSelector: { matchLabels: { "app.kubernetes.io/component": "egress-proxy" } },
            },
          ],
          ports: [{ protocol: "TCP", port: 3128 }],
        },
      ],
    });
  });
});
