import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "@agentplane/service-kit";
import {
  type FakeKubeApiServer,
  type KubeObject,
  restrictedViolations,
  validateKubeObject,
} from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubernetesSettingsSchema, kubernetesConfigFrom } from "../../src/driver/kubernetes/config.ts";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { collect, kubeDriver, NS, runtimeSpec, startFakeKube } from "./fixture.ts";

interface Container {
  name: string;
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
  volumes: Record<string, unknown>[];
}

function archiveOf(files: Record<string, string>): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "ro-root-archive-"));
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
  const data = execFileSync("tar", ["-czf", "-", "."], { cwd: dir });
  rmSync(dir, { recursive: true, force: true });
  return new Uint8Array(data);
}

describe("kubernetes driver: SANDBOX_K8S_READ_ONLY_ROOT", () => {
  let fake: FakeKubeApiServer;
  let readOnly: KubernetesDriver;
  let writable: KubernetesDriver;
  beforeAll(async () => {
    fake = await startFakeKube();
    readOnly = kubeDriver(fake, { readOnlyRoot: true });
    writable = kubeDriver(fake);
  });
  afterAll(async () => {
    await readOnly?.close();
    await writable?.close();
    await fake?.close();
  });

  const podSpec = (slug: string) => (fake.store.get("/pods", NS, slug) as KubeObject).spec as unknown as PodSpec;

  it("is read with the on/off words, off when unset", () => {
    const placement = (value?: string) =>
      kubernetesConfigFrom(
        parseEnv(KubernetesSettingsSchema, value === undefined ? {} : { SANDBOX_K8S_READ_ONLY_ROOT: value }),
      ).placement;
    expect(placement("on").readOnlyRoot).toBe(true);
    expect(placement("1").readOnlyRoot).toBe(true);
    expect(placement("off").readOnlyRoot).toBeUndefined();
    expect(placement().readOnlyRoot).toBeUndefined();
    expect(() => placement("readonly")).toThrow(/SANDBOX_K8S_READ_ONLY_ROOT: must be one of true, false/);
  });

  it("on: the container's root is read-only and /tmp an emptyDir bounded as its ephemeral storage", async () => {
    const spec = runtimeSpec({ command: ["sleep", "60"] });
    await readOnly.start(spec);
    const pod = fake.store.get("/pods", NS, spec.slug) as KubeObject;
    const { containers, volumes } = podSpec(spec.slug);
    expect(containers[0]?.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    expect(containers[0]?.volumeMounts).toEqual([
      { name: "workspace", mountPath: "/workspace" },
      { name: "tmp", mountPath: "/tmp" },
    ]);
    expect(volumes).toEqual([
      { name: "workspace", persistentVolumeClaim: { claimName: `${spec.slug}-workspace` } },
      { name: "tmp", emptyDir: { sizeLimit: "4096Mi" } },
    ]);
    expect(() => validateKubeObject(pod as never)).not.toThrow();
    expect(restrictedViolations(pod.spec as never)).toEqual([]);
    // The driver's own steps run as before: a command, a shell reading its input, the archive.
    const ran = await collect(await readOnly.exec(spec.id, { argv: ["sh", "-c", "echo here > where"] }));
    expect(ran.exitCode).toBe(0);
    expect(await collect(await readOnly.exec(spec.id, { argv: ["/bin/sh"] }), "cat where\n")).toMatchObject({
      exitCode: 0,
      stdout: "here\n",
    });
    const archive = await collect(await readOnly.exec(spec.id, { argv: ["tar", "-czf", "-", "."] }));
    expect(archive.exitCode).toBe(0);
    await readOnly.stop(spec.id);
  });

  it("on: the restore step's root is read-only too, and it writes only to the workspace", async () => {
    const spec = runtimeSpec({ command: ["sleep", "60"] });
    await readOnly.start({ ...spec, workspaceArchive: archiveOf({ file: "restored\n" }) });
    const { initContainers, containers } = podSpec(spec.slug);
    expect(initContainers?.[0]?.securityContext).toEqual(containers[0]?.securityContext);
    expect(initContainers?.[0]?.securityContext).toMatchObject({ readOnlyRootFilesystem: true });
    expect(initContainers?.[0]?.volumeMounts).toEqual([{ name: "workspace", mountPath: "/workspace" }]);
    const cat = await collect(await readOnly.exec(spec.id, { argv: ["cat", "file"] }));
    expect(cat).toMatchObject({ exitCode: 0, stdout: "restored\n" });
    await readOnly.stop(spec.id);
  });

  it("off: the Pod is as it was, its root writable and no volume but the workspace", async () => {
    const spec = runtimeSpec({ command: ["sleep", "60"] });
    await writable.start(spec);
    const { containers, volumes } = podSpec(spec.slug);
    expect(containers[0]?.securityContext).not.toHaveProperty("readOnlyRootFilesystem");
    expect(containers[0]?.volumeMounts).toEqual([{ name: "workspace", mountPath: "/workspace" }]);
    expect(volumes).toEqual([{ name: "workspace", persistentVolumeClaim: { claimName: `${spec.slug}-workspace` } }]);
    await writable.stop(spec.id);
  });
});
