import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type FakeKubeApiServer,
  type KubeObject,
  restrictedViolations,
  validateKubeObject,
} from "@agentplane/testkit/kube";
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { sandboxPod } from "../../src/driver/kubernetes/objects.ts";
import { exitMessage } from "../../src/driver/kubernetes/pod-state.ts";
import { withRestoreStep } from "../../src/driver/kubernetes/restore.ts";
import { collect, kubeDriver, NS, runtimeSpec, startFakeKube } from "./fixture.ts";

/** A gzipped tar of `files`, as the tar revisions take it (`tar -czf - .` in the workspace). */
function archiveOf(files: Record<string, string>): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "restore-archive-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const data = execFileSync("tar", ["-czf", "-", "."], { cwd: dir });
  rmSync(dir, { recursive: true, force: true });
  return new Uint8Array(data);
}

type PodSpec = { initContainers?: Record<string, unknown>[]; containers: Record<string, unknown>[] };

const PLACEMENT = {
  namespace: NS,
  defaultImage: "debian:12",
  serviceAccountName: "agentplane-sandbox",
  workspaceSize: "1Gi",
  defaults: { cpuMillicores: 500, memoryMiB: 256, ephemeralMiB: 1024 },
};

// What the main process saw the moment it started: the workspace's names and the file's content.
const RECORDS_AT_START = ["sh", "-c", "{ ls -A; cat src/file; } > .seen 2>&1; mv .seen .seen-at-start; exec sleep 60"];

describe("kubernetes driver: a start that restores the workspace first", () => {
  let fake: FakeKubeApiServer;
  let driver: KubernetesDriver;
  beforeAll(async () => {
    fake = await startFakeKube();
    driver = kubeDriver(fake, { startTimeoutMs: 3000 });
  });
  afterAll(async () => {
    await driver?.close();
    await fake?.close();
  });

  const pod = (name: string) => fake.store.get("/pods", NS, name);

  it("unpacks the archive in an init step, before the main container starts, in one Pod", async () => {
    const spec = runtimeSpec({ command: RECORDS_AT_START });
    await driver.start(spec);
    const workspace = fake.claimDir(NS, `${spec.slug}-workspace`);
    await collect(await driver.exec(spec.id, { argv: ["sh", "-c", "echo old > stale && mkdir src"] }));
    await driver.stop(spec.id);

    // Every Pod event of the restarting sandbox, in order.
    const timeline: string[] = [];
    const unsubscribe = fake.store.subscribe((event) => {
      if (event.resource !== "/pods" || event.object.metadata.name !== spec.slug) return;
      const status = (event.object.status ?? {}) as V1Pod["status"] & object;
      const init = status.initContainerStatuses?.[0]?.state ?? {};
      const main = status.containerStatuses?.[0]?.state ?? {};
      timeline.push(
        `${event.type} ${status.phase ?? "-"} restore:${Object.keys(init)[0] ?? "-"} main:${Object.keys(main)[0] ?? "-"}`,
      );
    });
    await driver.start({ ...spec, workspaceArchive: archiveOf({ "src/file": "restored\n", ".hidden": "h\n" }) });
    unsubscribe();

    // The Pod carries the restore step: the sandbox's image, limits and restricted context, the workspace, no Secret.
    const created = pod(spec.slug) as KubeObject;
    const podSpec = created.spec as unknown as PodSpec;
    const main = podSpec.containers[0] as Record<string, unknown>;
    expect(podSpec.initContainers).toHaveLength(1);
    expect(podSpec.initContainers?.[0]).toMatchObject({
      name: "restore",
      image: main.image,
      resources: main.resources,
      securityContext: main.securityContext,
      workingDir: "/workspace",
      volumeMounts: [{ name: "workspace", mountPath: "/workspace" }],
      env: [{ name: "POD_UID", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } }],
      terminationMessagePolicy: "FallbackToLogsOnError",
    });
    expect(podSpec.initContainers?.[0]).not.toHaveProperty("envFrom");
    expect(() => validateKubeObject(created as never)).not.toThrow();
    expect(restrictedViolations(podSpec as never)).toEqual([]);

    // One Pod, created once: the restore step ran, then the main container, which never restarted.
    expect(timeline.filter((t) => t.startsWith("ADDED"))).toHaveLength(1);
    const restoring = timeline.findIndex((t) => t.includes("restore:running main:waiting"));
    const running = timeline.findIndex((t) => t.includes("Running restore:terminated main:running"));
    expect(restoring).toBeGreaterThan(0);
    expect(running).toBeGreaterThan(restoring);
    expect(timeline.slice(running + 1).filter((t) => !t.includes("main:running"))).toEqual([]);
    expect((created.status as V1Pod["status"] & object).containerStatuses?.[0]?.restartCount).toBe(0);

    // The main process found the archive's content (and nothing else) when it started.
    await vi.waitFor(() =>
      expect(readFileSync(join(workspace, ".seen-at-start"), "utf8")).toBe(".hidden\n.seen\nsrc\nrestored\n"),
    );
    expect(readdirSync(workspace).sort()).toEqual([".hidden", ".seen-at-start", "src"]);
    const cat = await collect(await driver.exec(spec.id, { argv: ["cat", "src/file"] }));
    expect(cat).toMatchObject({ exitCode: 0, stdout: "restored\n" });

    // A plain start after it has no restore step and keeps the workspace.
    await driver.stop(spec.id);
    await driver.start(spec);
    expect(pod(spec.slug)?.spec?.initContainers).toBeUndefined();
    expect(readFileSync(join(workspace, "src/file"), "utf8")).toBe("restored\n");
    await driver.stop(spec.id);
  });

  it("fails the start with tar's message on a broken archive and leaves the workspace as it was", async () => {
    const spec = runtimeSpec({ command: RECORDS_AT_START });
    await driver.start(spec);
    // As an earlier restore killed while the archive's content was moved up left it (src/file is
    // the workspace's content, aside), and what one killed while unpacking left before the swap.
    const killed = [
      "mkdir -p .agentplane-previous-k1/src && echo kept > .agentplane-previous-k1/src/file",
      ": > .agentplane-previous-k1/.agentplane-previous-k1",
      "echo partial > added && mkdir .agentplane-restore-k1 && echo rest > .agentplane-restore-k1/more",
      "mkdir .agentplane-restored-old.d && echo x > .agentplane-restored-old.d/y && : > .agentplane-restored-old.tar.gz",
    ].join(" && ");
    expect(await collect(await driver.exec(spec.id, { argv: ["sh", "-c", killed] }))).toMatchObject({ exitCode: 0 });
    const workspace = fake.claimDir(NS, `${spec.slug}-workspace`);
    // The main process may write down what it saw after the exec: stopped only once it did.
    await vi.waitFor(() => expect(existsSync(join(workspace, ".seen-at-start"))).toBe(true));
    await driver.stop(spec.id);
    rmSync(join(workspace, ".seen-at-start"));

    const failure = await driver
      .start({ ...spec, workspaceArchive: new TextEncoder().encode("not a tar") })
      .catch((e: Error) => e);
    expect((failure as Error).message).toMatch(
      /^workspace restore failed \(exit 1\): .*gzip.*the archive did not unpack/s,
    );
    // The Pod is gone before its main container ever ran; the workspace is untouched.
    await vi.waitFor(() => expect(pod(spec.slug)).toBeUndefined());
    expect(readdirSync(workspace)).toEqual(["src"]);
    expect(readFileSync(join(workspace, "src/file"), "utf8")).toBe("kept\n");
    expect(existsSync(join(workspace, ".seen-at-start"))).toBe(false);
  });

  it("ends a restore step no archive reaches, failing the Pod with the reason", async () => {
    const spec = runtimeSpec();
    const claim = { metadata: { name: `${spec.slug}-workspace`, uid: "claim-uid" } };
    const body = withRestoreStep(sandboxPod(spec, PLACEMENT, claim), 0.4);
    fake.store.create("/pods", NS, body as unknown as KubeObject);
    await vi.waitFor(() => expect(pod(spec.slug)?.status?.phase).toBe("Failed"), { timeout: 5000 });
    expect(exitMessage(pod(spec.slug) as V1Pod)).toBe(
      "init container restore exited (code 1, Error): no workspace archive arrived within 0.4 s",
    );
  });
});
