// A sandbox's image is its owner's: its `sh` and `tar` (or any found first on a PATH the sandbox's
// env sets) run in the restore step, the workspace archive and the restore's recovery. What they
// write to standard error is read only as far as a failure's message needs, so one that never
// stops writing cannot grow sandbox-svc, which serves every project's sandboxes, without bound.
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { silentLogger } from "@agentplane/service-kit";
import type { FakeKubeApiServer, KubeObject } from "@agentplane/testkit/kube";
import { KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { sandboxPod } from "../../src/driver/kubernetes/objects.ts";
import { restoreWaiting, unpackIntoRestoreStep, withRestoreStep } from "../../src/driver/kubernetes/restore.ts";
import type { SandboxDeps } from "../../src/services/context.ts";
import { archiveWorkspace, settleInterruptedRestore } from "../../src/services/workspace-archives.ts";
import { kubeDriver, NS, runtimeSpec, startFakeKube } from "./fixture.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const FLOOD_MIB = 128;
const PLACEMENT = {
  namespace: NS,
  defaultImage: "debian:12",
  serviceAccountName: "agentplane-sandbox",
  workspaceSize: "1Gi",
  defaults: { cpuMillicores: 500, memoryMiB: 256, ephemeralMiB: 1024 },
};

describe("kubernetes driver: a sandbox image that floods standard error", () => {
  let fake: FakeKubeApiServer;
  let driver: KubernetesDriver;
  const root = mkdtempSync(join(tmpdir(), "hostile-image-"));

  /**
   * A directory whose `program` writes FLOOD_MIB to standard error, marks `flooded`, and fails once
   * `released` is there (the measurement is taken while it still runs).
   */
  function hostile(program: string): { bin: string; flooded: string } {
    const bin = mkdtempSync(join(root, `${program}-`));
    const flooded = join(bin, "flooded");
    const released = join(bin, "released");
    const script = [
      "#!/bin/sh",
      `head -c ${FLOOD_MIB * 1024 * 1024} /dev/zero | tr '\\0' x >&2`,
      `: > ${flooded}`,
      `until [ -e ${released} ]; do sleep 0.1; done`,
      "exit 2",
      "",
    ].join("\n");
    writeFileSync(join(bin, program), script);
    chmodSync(join(bin, program), 0o755);
    return { bin, flooded };
  }

  /** How many MiB of Buffers this process holds once the program has written everything, and the outcome. */
  async function heldWhile<T>(flooded: string, run: () => Promise<T>): Promise<{ held: number; outcome: T | Error }> {
    const outcome = run().catch((e: Error) => e);
    await vi.waitFor(() => expect(existsSync(flooded)).toBe(true), { timeout: 30_000 });
    // The least over a second while it still runs: what was on its way has arrived by then.
    let held = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 150));
      gc();
      held = Math.min(held, process.memoryUsage().arrayBuffers / (1024 * 1024));
    }
    writeFileSync(join(flooded, "..", "released"), "");
    return { held, outcome: await outcome };
  }

  beforeAll(async () => {
    fake = await startFakeKube();
    driver = kubeDriver(fake, { startTimeoutMs: 5000 });
  });
  afterAll(async () => {
    await driver?.close();
    await fake?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("in the restore step: keeps no more of it than the failure's message", async () => {
    const { bin, flooded } = hostile("tar");
    const spec = runtimeSpec();
    const claim = { metadata: { name: `${spec.slug}-workspace`, uid: "claim-uid" } };
    const body = withRestoreStep(sandboxPod(spec, PLACEMENT, claim), 30) as V1Pod;
    const init = body.spec?.initContainers?.[0] as { env: { name: string; value?: string }[] };
    init.env.push({ name: "PATH", value: `${bin}:${process.env.PATH}` });
    fake.store.create("/pods", NS, body as unknown as KubeObject);
    const pod = () => fake.store.get("/pods", NS, spec.slug) as unknown as V1Pod;
    await vi.waitFor(() => expect(restoreWaiting(pod())).toBe(true), { timeout: 5000 });
    const kc = new KubeConfig();
    kc.loadFromString(fake.kubeconfig(NS));

    const { held, outcome } = await heldWhile(flooded, () =>
      unpackIntoRestoreStep(kc, NS, pod(), new Uint8Array([1, 2, 3])),
    );
    expect(held).toBeLessThan(FLOOD_MIB / 4);
    expect((outcome as Error).message).toMatch(/^workspace restore failed \(exit 1\): x{100}/);
    expect((outcome as Error).message.length).toBeLessThan(600);
  }, 60_000);

  it("archiving the workspace, and settling an interrupted restore: keeps no more of it than a message", async () => {
    const tar = hostile("tar");
    const sh = hostile("sh");
    const deps = { driver, logger: silentLogger() } as unknown as SandboxDeps;

    const archived = runtimeSpec({ env: { PATH: `${tar.bin}:${process.env.PATH}` } });
    await driver.start(archived);
    const archive = await heldWhile(tar.flooded, () => archiveWorkspace(deps, archived.id, 1));
    expect(archive.held).toBeLessThan(FLOOD_MIB / 4);
    expect(archive.outcome).toBeUndefined();

    const settled = runtimeSpec({ env: { PATH: `${sh.bin}:${process.env.PATH}` } });
    await driver.start(settled);
    const settle = await heldWhile(sh.flooded, () => settleInterruptedRestore(deps, settled.id));
    expect(settle.held).toBeLessThan(FLOOD_MIB / 4);
    expect((settle.outcome as Error).message).toMatch(/^exit 2: x{100}/);
    expect((settle.outcome as Error).message.length).toBeLessThan(600);
    await driver.stop(archived.id);
    await driver.stop(settled.id);
  }, 90_000);
});
