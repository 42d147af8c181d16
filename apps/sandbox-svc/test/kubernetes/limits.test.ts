import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { kubeDriver, NS, runtimeSpec, startFakeKube } from "./fixture.ts";

// A Pod spec has no process limit (only the kubelet's podPidsLimit, per node): a sandbox asking for
// maxProcesses on Kubernetes is told it does not hold, as on a host without cgroups.
describe("kubernetes driver: limits that do not hold", () => {
  let fake: FakeKubeApiServer;
  let driver: KubernetesDriver;
  beforeAll(async () => {
    fake = await startFakeKube();
    driver = kubeDriver(fake);
  });
  afterAll(async () => {
    await driver?.close();
    await fake?.close();
  });

  it("names maxProcesses, which no Pod field enforces, and nothing else", async () => {
    const spec = runtimeSpec({ resources: { cpuMillicores: 250, memoryMiB: 256, diskMiB: 512, maxProcesses: 64 } });
    await driver.start(spec);
    const pod = JSON.stringify(fake.store.get("/pods", NS, spec.slug));
    expect(pod).not.toMatch(/pids/i);
    expect(driver.unenforcedLimits?.(spec.resources)).toEqual({
      resources: ["maxProcesses"],
      reason: "Kubernetes has no process limit per Pod (the node's kubelet podPidsLimit applies)",
    });
    expect(driver.unenforcedLimits?.({ cpuMillicores: 250, memoryMiB: 256, diskMiB: 512 })).toBeUndefined();
    await driver.stop(spec.id);
  });
});
