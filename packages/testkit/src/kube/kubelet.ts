import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject, ObjectStore, StoreEvent } from "./store.ts";

const PODS = "/pods";
const SECRETS = "/secrets";
const SNAPSHOTS = "snapshot.storage.k8s.io/volumesnapshots";
const CLAIMS = "/persistentvolumeclaims";

interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { prefix?: string; secretRef?: { name: string } }[];
  workingDir?: string;
  volumeMounts?: { name: string; mountPath: string }[];
}

interface RunningPod {
  proc: ChildProcess;
  /** Directory standing in for the container's root: mount paths map to claim directories. */
  mounts: { mountPath: string; dir: string }[];
  env: Record<string, string>;
  cwd: string;
  /** Stoppers of exec and port-forward streams into the Pod: they end with it. */
  streams: Set<() => void>;
  deleting: boolean;
}

export interface KubeletFailures {
  /** Returns the scheduler's message for a Pod that cannot be placed (then it stays Pending, Unschedulable). */
  schedule?: (pod: KubeObject) => string | undefined;
  /** Images whose pull fails (ErrImagePull). */
  imagePull: Set<string>;
}

const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");

/**
 * A node's kubelet for the fake API server: Pods are "run" by starting their container's command as
 * a local process (environment, working directory and the claim's directory for a mounted
 * PersistentVolumeClaim), and their status follows it (Running/Ready, Succeeded/Failed with the exit
 * code, Pending with Unschedulable or ErrImagePull when asked to fail).
 */
export class FakeKubelet {
  private readonly running = new Map<string, RunningPod>();
  private readonly unsubscribe: () => void;

  private readonly store: ObjectStore;
  private readonly dataDir: string;
  readonly failures: KubeletFailures;

  constructor(store: ObjectStore, dataDir: string, failures: KubeletFailures) {
    this.store = store;
    this.dataDir = dataDir;
    this.failures = failures;
    this.unsubscribe = store.subscribe((event) => this.onEvent(event));
  }

  claimDir(namespace: string, claim: string): string {
    return join(this.dataDir, "claims", namespace, claim);
  }

  snapshotDir(namespace: string, snapshot: string): string {
    return join(this.dataDir, "snapshots", namespace, snapshot);
  }

  private onEvent(event: StoreEvent): void {
    const { metadata } = event.object;
    const ns = metadata.namespace ?? "default";
    // The CSI snapshotter: a copy of the claim's content, ready at once.
    if (event.resource === SNAPSHOTS && event.type === "ADDED") {
      const source = (event.object.spec?.source as { persistentVolumeClaimName?: string } | undefined)
        ?.persistentVolumeClaimName;
      const from = source ? this.claimDir(ns, source) : undefined;
      if (from && existsSync(from)) {
        cpSync(from, this.snapshotDir(ns, metadata.name), { recursive: true });
        queueMicrotask(() =>
          this.store.update(SNAPSHOTS, ns, metadata.name, (o) => {
            o.status = {
              readyToUse: true,
              creationTime: now(),
              boundVolumeSnapshotContentName: `snapcontent-${o.metadata.uid}`,
            };
          }),
        );
      }
    }
    if (event.resource === SNAPSHOTS && event.type === "DELETED") {
      rmSync(this.snapshotDir(ns, metadata.name), { recursive: true, force: true });
    }
    if (event.resource === CLAIMS && event.type === "ADDED") {
      mkdirSync(this.claimDir(ns, metadata.name), { recursive: true });
      // Provisioned from a VolumeSnapshot: the snapshot's content.
      const dataSource = event.object.spec?.dataSource as { kind?: string; name?: string } | undefined;
      if (dataSource?.kind === "VolumeSnapshot" && dataSource.name) {
        const snapshot = this.snapshotDir(ns, dataSource.name);
        if (existsSync(snapshot)) cpSync(snapshot, this.claimDir(ns, metadata.name), { recursive: true });
      }
      // Bound at once, as with an immediate-binding storage class.
      queueMicrotask(() =>
        this.store.update(CLAIMS, ns, metadata.name, (o) => {
          o.status = { phase: "Bound", accessModes: (o.spec?.accessModes as string[]) ?? ["ReadWriteOnce"] };
        }),
      );
    }
    if (event.resource === CLAIMS && event.type === "DELETED") {
      rmSync(this.claimDir(ns, metadata.name), { recursive: true, force: true });
    }
    // A Pod waiting for its Secret starts once it exists.
    if (event.resource === SECRETS && event.type !== "DELETED") setImmediate(() => this.reschedule());
    if (event.resource !== PODS) return;
    if (event.type === "ADDED") setImmediate(() => this.schedule(ns, metadata.name));
    if (event.type === "DELETED") this.kill(ns, metadata.name);
  }

  /** Places a Pending Pod again (after a scheduling failure was lifted). */
  reschedule(): void {
    for (const pod of this.store.list(PODS)) {
      if ((pod.status?.phase ?? "Pending") === "Pending")
        this.schedule(pod.metadata.namespace ?? "default", pod.metadata.name);
    }
  }

  private schedule(ns: string, name: string): void {
    const pod = this.store.get(PODS, ns, name);
    if (!pod || pod.metadata.deletionTimestamp || this.running.has(`${ns}/${name}`)) return;
    const unschedulable = this.failures.schedule?.(pod);
    if (unschedulable) {
      this.store.update(PODS, ns, name, (o) => {
        o.status = {
          phase: "Pending",
          conditions: [
            {
              type: "PodScheduled",
              status: "False",
              reason: "Unschedulable",
              message: unschedulable,
              lastTransitionTime: now(),
            },
          ],
        };
      });
      return;
    }
    const container = ((pod.spec?.containers as Container[]) ?? [])[0] as Container;
    if (container.image && this.failures.imagePull.has(container.image)) {
      this.store.update(PODS, ns, name, (o) => {
        o.spec = { ...o.spec, nodeName: "fake-node" };
        o.status = {
          phase: "Pending",
          conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: now() }],
          containerStatuses: [
            {
              name: container.name,
              image: container.image,
              imageID: "",
              ready: false,
              restartCount: 0,
              state: {
                waiting: {
                  reason: "ErrImagePull",
                  message: `failed to pull and unpack image "${container.image}": not found`,
                },
              },
            },
          ],
        };
      });
      return;
    }
    const env = this.containerEnv(ns, container);
    if (typeof env === "string") {
      // As a kubelet does: the Pod waits (CreateContainerConfigError) until the Secret exists.
      this.store.update(PODS, ns, name, (o) => {
        o.spec = { ...o.spec, nodeName: "fake-node" };
        o.status = {
          phase: "Pending",
          conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: now() }],
          containerStatuses: [
            {
              name: container.name,
              image: container.image,
              imageID: "",
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: "CreateContainerConfigError", message: env } },
            },
          ],
        };
      });
      return;
    }
    this.start(ns, pod, container, env);
  }

  /** `envFrom` Secrets, then `env` (values and secretKeyRefs), as a kubelet resolves them; a missing Secret is the error. */
  private containerEnv(ns: string, container: Container): Record<string, string> | string {
    const env: Record<string, string> = {};
    const secret = (name: string) => {
      const found = this.store.get(SECRETS, ns, name);
      if (!found) return undefined;
      const data = (found.data ?? {}) as Record<string, string>;
      return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
    };
    for (const from of container.envFrom ?? []) {
      if (!from.secretRef) continue;
      const data = secret(from.secretRef.name);
      if (!data) return `secret "${from.secretRef.name}" not found`;
      for (const [k, v] of Object.entries(data)) env[`${from.prefix ?? ""}${k}`] = v;
    }
    for (const e of container.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      if (ref) {
        const value = secret(ref.name)?.[ref.key];
        if (value === undefined) return `couldn't find key ${ref.key} in Secret ${ns}/${ref.name}`;
        env[e.name] = value;
      } else env[e.name] = e.value ?? "";
    }
    return env;
  }

  private start(ns: string, pod: KubeObject, container: Container, containerEnv: Record<string, string>): void {
    const name = pod.metadata.name;
    const volumes = (pod.spec?.volumes as { name: string; persistentVolumeClaim?: { claimName: string } }[]) ?? [];
    const podDir = join(this.dataDir, "pods", ns, name);
    mkdirSync(podDir, { recursive: true });
    const mounts = (container.volumeMounts ?? []).map((m) => {
      const claim = volumes.find((v) => v.name === m.name)?.persistentVolumeClaim?.claimName;
      return { mountPath: m.mountPath, dir: claim ? this.claimDir(ns, claim) : join(podDir, m.name) };
    });
    for (const m of mounts) mkdirSync(m.dir, { recursive: true });
    const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOSTNAME: name };
    Object.assign(env, containerEnv);
    const cwd = this.localPath(mounts, container.workingDir) ?? podDir;
    const argv = [...(container.command ?? ["sleep", "infinity"]), ...(container.args ?? [])];
    const proc = spawn(argv[0] as string, argv.slice(1), { cwd, env, stdio: "ignore", detached: true });
    const running: RunningPod = { proc, mounts, env, cwd, streams: new Set(), deleting: false };
    this.running.set(`${ns}/${name}`, running);
    const startedAt = now();
    proc.once("spawn", () =>
      this.store.update(PODS, ns, name, (o) => {
        o.spec = { ...o.spec, nodeName: "fake-node" };
        o.status = {
          phase: "Running",
          podIP: "127.0.0.1",
          startTime: startedAt,
          conditions: [
            { type: "PodScheduled", status: "True", lastTransitionTime: startedAt },
            { type: "Ready", status: "True", lastTransitionTime: startedAt },
          ],
          containerStatuses: [
            {
              name: container.name,
              image: container.image,
              imageID: `${container.image}@sha256:${"0".repeat(64)}`,
              containerID: `containerd://${name}`,
              ready: true,
              restartCount: 0,
              state: { running: { startedAt } },
            },
          ],
        };
      }),
    );
    const exited = (code: number | null, signal: NodeJS.Signals | null, error?: string) => {
      // A deleted Pod's process may end after a new Pod of the same name started: leave that one be.
      if (this.running.get(`${ns}/${name}`) === running) this.running.delete(`${ns}/${name}`);
      for (const stop of running.streams) stop();
      if (running.deleting) return;
      const exitCode = code ?? (signal ? 128 + 9 : 128);
      this.store.update(PODS, ns, name, (o) => {
        o.status = {
          ...o.status,
          phase: exitCode === 0 ? "Succeeded" : "Failed",
          conditions: [{ type: "Ready", status: "False", reason: "PodCompleted", lastTransitionTime: now() }],
          containerStatuses: [
            {
              name: container.name,
              image: container.image,
              imageID: `${container.image}@sha256:${"0".repeat(64)}`,
              containerID: `containerd://${name}`,
              ready: false,
              restartCount: 0,
              state: {
                terminated: {
                  exitCode,
                  reason: error ? "StartError" : exitCode === 0 ? "Completed" : "Error",
                  ...(error ? { message: error } : {}),
                  finishedAt: now(),
                },
              },
            },
          ],
        };
      });
    };
    proc.once("error", (err) => exited(128, null, err.message));
    proc.once("exit", (code, signal) => exited(code, signal));
  }

  /** The local directory for a path inside the container, when it lies under a mount. */
  localPath(mounts: RunningPod["mounts"], path: string | undefined): string | undefined {
    if (!path) return undefined;
    for (const m of mounts) {
      if (path === m.mountPath || path.startsWith(`${m.mountPath}/`))
        return join(m.dir, path.slice(m.mountPath.length));
    }
    return undefined;
  }

  /** The running container of a Pod, for exec and port-forward. */
  container(
    ns: string,
    name: string,
  ): { env: Record<string, string>; cwd: string; streams: Set<() => void> } | undefined {
    const running = this.running.get(`${ns}/${name}`);
    return running && !running.deleting ? { env: running.env, cwd: running.cwd, streams: running.streams } : undefined;
  }

  /** Stops a Pod's processes (deletion: SIGKILL, as with a zero grace period). */
  kill(ns: string, name: string): void {
    const running = this.running.get(`${ns}/${name}`);
    if (!running) return;
    running.deleting = true;
    this.running.delete(`${ns}/${name}`);
    for (const stop of running.streams) stop();
    try {
      process.kill(-(running.proc.pid as number), "SIGKILL");
    } catch {
      running.proc.kill("SIGKILL");
    }
  }

  close(): void {
    this.unsubscribe();
    for (const key of [...this.running.keys()]) {
      const [ns, name] = key.split("/") as [string, string];
      this.kill(ns, name);
    }
  }
}
