// Archiving the workspace runs the sandbox's own tar (its image's, or the first on a PATH its env
// sets). One that never ends must not hold the change it accompanies, the revision's restart,
// forever: it is given up at a deadline and the change goes on without an archive.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import type { SandboxDeps } from "../../src/services/context.ts";
import { archiveWorkspace } from "../../src/services/workspace-archives.ts";
import { collect, kubeDriver, runtimeSpec, startFakeKube } from "./fixture.ts";

describe("kubernetes driver: a workspace archive whose tar never ends", () => {
  let fake: FakeKubeApiServer;
  let driver: KubernetesDriver;
  const bin = mkdtempSync(join(tmpdir(), "endless-tar-"));
  beforeAll(async () => {
    fake = await startFakeKube();
    driver = kubeDriver(fake, { startTimeoutMs: 5000 });
    writeFileSync(join(bin, "tar"), "#!/bin/sh\necho started > .tar-started\nexec sleep 600\n");
    chmodSync(join(bin, "tar"), 0o755);
  });
  afterAll(async () => {
    await driver?.close();
    await fake?.close();
    rmSync(bin, { recursive: true, force: true });
  });

  it("is given up at the deadline and no archive is kept", async () => {
    const spec = runtimeSpec({ env: { PATH: `${bin}:${process.env.PATH}` } });
    await driver.start(spec);
    const warnings: string[] = [];
    const logger = { warn: (_obj: unknown, msg: string) => warnings.push(msg), info() {}, error() {}, debug() {} };
    const deps = { driver, logger, config: { archiveTimeoutMs: 500 } } as unknown as SandboxDeps;
    const started = Date.now();
    const outcome = await Promise.race([
      archiveWorkspace(deps, spec.id, 1),
      new Promise((r) => setTimeout(() => r("still waiting"), 10_000)),
    ]);
    expect(outcome).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(warnings.join("\n")).toMatch(/workspace archive took longer than 0\.5 s/);
    // It was the sandbox's tar that was waited for.
    expect((await collect(await driver.exec(spec.id, { argv: ["cat", ".tar-started"] }))).stdout).toBe("started\n");
    await driver.stop(spec.id);
  }, 30_000);
});
