import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import type { DriverEvent } from "../../src/driver/types.ts";
import { collect, kubeDriver, NS, runtimeSpec, startFakeKube } from "./fixture.ts";

describe("kubernetes driver: lifecycle against the fake API server", () => {
  let fake: FakeKubeApiServer;
  let driver: KubernetesDriver;
  const events: DriverEvent[] = [];
  beforeAll(async () => {
    fake = await startFakeKube();
    driver = kubeDriver(fake, { startTimeoutMs: 1500 });
    driver.onEvent((e) => events.push(e));
  });
  afterAll(async () => {
    await driver?.close();
    await fake?.close();
  });

  const pod = (name: string) => fake.store.get("/pods", NS, name);
  const claim = (slug: string) => fake.store.get("/persistentvolumeclaims", NS, `${slug}-workspace`);

  it("starts a Pod named by the slug with its claim and policy, keeps the claim over a stop, removes all on delete", async () => {
    const spec = runtimeSpec({ command: ["sh", "-c", "echo started > marker; exec sleep 60"] });
    await driver.start(spec);
    expect(await driver.status(spec.id)).toEqual({ phase: "running" });
    const created = pod(spec.slug);
    expect(created?.metadata.labels).toMatchObject({
      "agentplane.dev/sandbox-id": spec.id,
      "agentplane.dev/org-id": "org_k8s",
      "agentplane.dev/project-id": "prj_k8s",
    });
    const owner = claim(spec.slug);
    expect(created?.metadata.ownerReferences?.[0]?.uid).toBe(owner?.metadata.uid);
    expect(fake.store.get("networking.k8s.io/networkpolicies", NS, spec.slug)?.metadata.ownerReferences?.[0]?.uid).toBe(
      owner?.metadata.uid,
    );
    // Idempotent: a second start (another replica, a retry) adopts the Pod.
    await driver.start(spec);
    const workspace = fake.claimDir(NS, `${spec.slug}-workspace`);
    await vi.waitFor(() => expect(readFileSync(join(workspace, "marker"), "utf8")).toBe("started\n"));

    await driver.stop(spec.id);
    expect(pod(spec.slug)).toBeUndefined();
    expect(claim(spec.slug)).toBeDefined();
    expect(await driver.status(spec.id)).toEqual({ phase: "stopped" });
    expect(events.filter((e) => e.sandboxId === spec.id && e.status.phase !== "starting")).toHaveLength(1);

    // The workspace survived the stop: a new Pod mounts the same claim.
    await driver.start(spec);
    const cat = await collect(await driver.exec(spec.id, { argv: ["cat", "marker"] }));
    expect(cat).toMatchObject({ exitCode: 0, stdout: "started\n" });

    await driver.stop(spec.id);
    await driver.removeWorkspace(spec.id);
    expect(claim(spec.slug)).toBeUndefined();
    await vi.waitFor(() => expect(fake.store.get("networking.k8s.io/networkpolicies", NS, spec.slug)).toBeUndefined());
    expect(existsSync(workspace)).toBe(false);
  });

  it("reports a main process that exits as stopped or failed, with its exit code", async () => {
    const spec = runtimeSpec({ command: ["sh", "-c", "sleep 0.3; exit 4"] });
    await driver.start(spec);
    await vi.waitFor(() =>
      expect(events.find((e) => e.sandboxId === spec.id && e.status.phase === "failed")?.status.message).toBe(
        "main process exited (code 4, Error)",
      ),
    );
    expect((await driver.status(spec.id)).phase).toBe("failed");
    // A later start replaces the ended Pod.
    const again = { ...spec, command: ["sleep", "60"] };
    await driver.start(again);
    expect((await driver.status(spec.id)).phase).toBe("running");
    await driver.stop(spec.id);
  });

  it("shows the scheduler's reason while waiting and times out with it", async () => {
    fake.unschedulable = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.";
    const spec = runtimeSpec();
    const failure = await driver.start(spec).catch((e: Error) => e);
    fake.unschedulable = undefined;
    expect((failure as Error).message).toBe(
      `Pod ${spec.slug} was not ready within 2 s: Unschedulable: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.`,
    );
    expect(events).toContainEqual({
      sandboxId: spec.id,
      status: {
        phase: "starting",
        message: "Unschedulable: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
      },
    });
    // The Pod that never ran is removed; the claim stays for the next try.
    await vi.waitFor(() => expect(pod(spec.slug)).toBeUndefined());
    expect(claim(spec.slug)).toBeDefined();
  });

  it("reports an image that cannot be pulled", async () => {
    fake.kubelet.failures.imagePull.add("registry.example/missing:1");
    const spec = runtimeSpec({ image: "registry.example/missing:1" });
    const failure = await driver.start(spec).catch((e: Error) => e);
    expect((failure as Error).message).toContain(
      'ErrImagePull: failed to pull and unpack image "registry.example/missing:1"',
    );
  });

  it("refuses what is not an image reference", () => {
    expect(() => driver.validateImage("docker.io/library/debian:12")).not.toThrow();
    expect(() => driver.validateImage("Not An Image")).toThrow(/not an OCI image reference/);
  });
});
