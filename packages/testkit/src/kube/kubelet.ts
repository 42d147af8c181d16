import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { FakeStorage } from "./storage.ts";
import type { KubeObject, ObjectStore, StoreEvent } from "./store.ts";

const PODS = "/pods";
const SECRETS = "/secrets";

interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
  }[];
  envFrom?: { prefix?: string; secretRef?: { name: string } }[];
  workingDir?: string;
  volumeMounts?: { name: string; mountPath: string }[];
  terminationMessagePolicy?: string;
}

interface RunningPod {
  proc: ChildProcess;
  /** The container this process is: an init container while the Pod initializes, then the main one. */
  container: string;
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
 * PersistentVolumeClaim), after their init containers one by one (the Pod Pending and not
 * Initialized meanwhile; a failed one fails the Pod), and their status follows it (Running/Ready, Succeeded/Failed with the exit
 * code, Pending with Unschedulable or ErrImagePull when asked to fail).
 */
export class FakeKubelet {
  private readonly running = new Map<string, RunningPod>();
  /** Init containers completed per Pod uid: a Pod rescheduled while waiting does not run them again. */
  private readonly initDone = new Map<string, number>();
  private readonly unsubscribe: () => void;

  private readonly store: ObjectStore;
  private readonly dataDir: string;
  readonly failures: KubeletFailures;
  private readonly storage: FakeStorage;

  constructor(store: ObjectStore, dataDir: string, failures: KubeletFailures) {
    this.store = store;
    this.dataDir = dataDir;
    this.failures = failures;
    this.storage = new FakeStorage(store, dataDir);
    this.unsubscribe = store.subscribe((event) => this.onEvent(event));
  }

  claimDir(namespace: string, claim: string): string {
    return this.storage.claimDir(namespace, claim);
  }

  snapshotDir(namespace: string, snapshot: string): string {
    return this.storage.snapshotDir(namespace, snapshot);
  }

  private onEvent(event: StoreEvent): void {
    const { metadata } = event.object;
    const ns = metadata.namespace ?? "default";
    this.storage.onEvent(event);
    // A Pod waiting for its Secret starts once it exists.
    if (event.resource === SECRETS && event.type !== "DELETED") setImmediate(() => this.reschedule());
    if (event.resource !== PODS) return;
    if (event.type === "ADDED") setImmediate(() => this.schedule(ns, metadata.name));
    if (event.type === "DELETED") {
      this.kill(ns, metadata.name);
      this.initDone.delete(metadata.uid as string);
    }
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
    this.initialize(ns, pod, container);
  }

  /** Runs the Pod's init containers one after the other (those done are not run again), then its container. */
  private initialize(ns: string, pod: KubeObject, main: Container): void {
    const name = pod.metadata.name;
    const inits = (pod.spec?.initContainers as Container[] | undefined) ?? [];
    const uid = pod.metadata.uid as string;
    const index = this.initDone.get(uid) ?? 0;
    const current = inits[index];
    const target = current ?? main;
    const env = this.containerEnv(ns, pod, target);
    if (typeof env === "string") {
      // As a kubelet does: the Pod waits (CreateContainerConfigError) until the Secret exists.
      this.store.update(PODS, ns, name, (o) => {
        o.spec = { ...o.spec, nodeName: "fake-node" };
        o.status = {
          phase: "Pending",
          conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: now() }],
          ...this.statuses(inits, index, main, {
            waiting: { reason: "CreateContainerConfigError", message: env },
          }),
        };
      });
      return;
    }
    if (!current) {
      this.start(ns, pod, main, env, inits);
      return;
    }
    const running = this.spawnContainer(ns, pod, current, env);
    const startedAt = now();
    running.proc.once("spawn", () =>
      this.store.update(PODS, ns, name, (o) => {
        o.spec = { ...o.spec, nodeName: "fake-node" };
        o.status = {
          phase: "Pending",
          startTime: startedAt,
          conditions: [
            { type: "PodScheduled", status: "True", lastTransitionTime: startedAt },
            { type: "Initialized", status: "False", reason: "ContainersNotInitialized", lastTransitionTime: startedAt },
          ],
          ...this.statuses(inits, index, main, { running: { startedAt } }),
        };
      }),
    );
    const exited = (code: number | null, signal: NodeJS.Signals | null, error?: string) => {
      if (this.running.get(`${ns}/${name}`) === running) this.running.delete(`${ns}/${name}`);
      for (const stop of running.streams) stop();
      if (running.deleting) return;
      const exitCode = code ?? (signal ? 128 + 9 : 128);
      if (exitCode === 0) {
        this.initDone.set(uid, index + 1);
        const latest = this.store.get(PODS, ns, name);
        if (latest && latest.metadata.uid === uid && !latest.metadata.deletionTimestamp) {
          this.initialize(ns, latest, main);
        }
        return;
      }
      // restartPolicy Never: a failed init container fails the Pod; its log's end is the message.
      const logs = current.terminationMessagePolicy === "FallbackToLogsOnError" ? running.stderrTail() : "";
      const message = error ?? (logs || undefined);
      this.store.update(PODS, ns, name, (o) => {
        o.status = {
          ...o.status,
          phase: "Failed",
          conditions: [
            { type: "Initialized", status: "False", reason: "ContainersNotInitialized", lastTransitionTime: now() },
            { type: "Ready", status: "False", reason: "PodFailed", lastTransitionTime: now() },
          ],
          ...this.statuses(inits, index, main, {
            terminated: {
              exitCode,
              reason: error ? "StartError" : "Error",
              ...(message ? { message } : {}),
              finishedAt: now(),
            },
          }),
        };
      });
    };
    running.proc.once("error", (err) => exited(128, null, err.message));
    running.proc.once("exit", (code, signal) => exited(code, signal));
  }

  /**
   * `initContainerStatuses` and `containerStatuses` while init container `index` is in `state`:
   * those before it completed, those after it and the main container waiting (PodInitializing).
   */
  private statuses(inits: Container[], index: number, main: Container, state: Record<string, unknown>) {
    const status = (c: Container, s: Record<string, unknown>) => ({
      name: c.name,
      image: c.image,
      imageID: "",
      ready: false,
      restartCount: 0,
      state: s,
    });
    const initializing = { waiting: { reason: "PodInitializing" } };
    const completed = { terminated: { exitCode: 0, reason: "Completed", finishedAt: now() } };
    if (index >= inits.length) {
      return {
        ...(inits.length > 0 ? { initContainerStatuses: inits.map((c) => status(c, completed)) } : {}),
        containerStatuses: [status(main, state)],
      };
    }
    return {
      initContainerStatuses: inits.map((c, i) => status(c, i < index ? completed : i === index ? state : initializing)),
      containerStatuses: [status(main, initializing)],
    };
  }

  /**
   * `envFrom` Secrets, then `env` (values, secretKeyRefs and the Pod's name, namespace and uid by
   * fieldRef), as a kubelet resolves them; a missing Secret is the error.
   */
  private containerEnv(ns: string, pod: KubeObject, container: Container): Record<string, string> | string {
    const env: Record<string, string> = {};
    const secret = (name: string) => {
      const found = this.store.get(SECRETS, ns, name);
      if (!found) return undefined;
      const data = (found.data ?? {}) as Record<string, string>;
      return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
    };
    const fields: Record<string, string> = {
      "metadata.name": pod.metadata.name,
      "metadata.namespace": ns,
      "metadata.uid": pod.metadata.uid as string,
    };
    for (const from of container.envFrom ?? []) {
      if (!from.secretRef) continue;
      const data = secret(from.secretRef.name);
      if (!data) return `secret "${from.secretRef.name}" not found`;
      for (const [k, v] of Object.entries(data)) env[`${from.prefix ?? ""}${k}`] = v;
    }
    for (const e of container.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      const field = e.valueFrom?.fieldRef?.fieldPath;
      if (ref) {
        const value = secret(ref.name)?.[ref.key];
        if (value === undefined) return `couldn't find key ${ref.key} in Secret ${ns}/${ref.name}`;
        env[e.name] = value;
      } else if (field) {
        if (!(field in fields)) return `unsupported fieldPath ${field}`;
        env[e.name] = fields[field] as string;
      } else env[e.name] = e.value ?? "";
    }
    return env;
  }

  /** Starts a container's command as a local process, its mounts mapped to the claims' directories. */
  private spawnContainer(
    ns: string,
    pod: KubeObject,
    container: Container,
    containerEnv: Record<string, string>,
  ): RunningPod & { stderrTail(): string } {
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
    const proc = spawn(argv[0] as string, argv.slice(1), {
      cwd,
      env,
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    // The end of its standard error, for a termination message (FallbackToLogsOnError).
    let tail = "";
    proc.stderr?.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString("utf8")).slice(-4096);
    });
    const running = {
      proc,
      container: container.name,
      mounts,
      env,
      cwd,
      streams: new Set<() => void>(),
      deleting: false,
      stderrTail: () => tail.trim(),
    };
    this.running.set(`${ns}/${name}`, running);
    return running;
  }

  private start(
    ns: string,
    pod: KubeObject,
    container: Container,
    containerEnv: Record<string, string>,
    inits: Container[],
  ): void {
    const name = pod.metadata.name;
    const running = this.spawnContainer(ns, pod, container, containerEnv);
    const { proc } = running;
    const startedAt = now();
    const image = {
      name: container.name,
      image: container.image,
      imageID: `${container.image}@sha256:${"0".repeat(64)}`,
      containerID: `containerd://${name}`,
      restartCount: 0,
    };
    const initialized = inits.length > 0 ? this.statuses(inits, inits.length, container, {}) : {};
    proc.once("spawn", () =>
      this.store.update(PODS, ns, name, (o) => {
        o.spec = { ...o.spec, nodeName: "fake-node" };
        o.status = {
          phase: "Running",
          podIP: "127.0.0.1",
          startTime: (o.status?.startTime as string | undefined) ?? startedAt,
          conditions: [
            { type: "PodScheduled", status: "True", lastTransitionTime: startedAt },
            { type: "Initialized", status: "True", lastTransitionTime: startedAt },
            { type: "Ready", status: "True", lastTransitionTime: startedAt },
          ],
          ...initialized,
          containerStatuses: [{ ...image, ready: true, state: { running: { startedAt } } }],
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
              ...image,
              ready: false,
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

  /**
   * The running container of a Pod, for exec and port-forward: `container` names it (an init
   * container while the Pod initializes); without a name, whichever runs.
   */
  container(
    ns: string,
    name: string,
    container?: string,
  ): { env: Record<string, string>; cwd: string; streams: Set<() => void> } | undefined {
    const running = this.running.get(`${ns}/${name}`);
    if (!running || running.deleting || (container !== undefined && running.container !== container)) return undefined;
    return { env: running.env, cwd: running.cwd, streams: running.streams };
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
