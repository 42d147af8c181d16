import type { Duplex } from "node:stream";
import { ProblemError } from "@agentplane/problem-details";
import type { Logger } from "@agentplane/service-kit";
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  NetworkingV1Api,
  type V1PersistentVolumeClaim,
  type V1Pod,
} from "@kubernetes/client-node";
import type {
  DriverEvent,
  DriverStatus,
  ExecOptions,
  ExecProcess,
  SandboxDriver,
  SandboxResources,
  SandboxRuntimeSpec,
  SnapshotRetention,
  UnenforcedLimits,
} from "../types.ts";
import { type StartOptions, StartWithdrawnError, WorkspaceRestoreError } from "../types.ts";
import { apiMessage, apiProblem, DEFAULT_API_TIMEOUT_MS, statusCode, withRequestDeadline } from "./api-errors.ts";
import { type EgressCredentials, sandboxProxyEnv } from "./egress-credential.ts";
import { GC_LEASE, LeaderLease } from "./lease.ts";
import {
  claimName,
  DRIVER_SELECTOR,
  envSecretName,
  imageRegistry,
  type KubernetesPlacement,
  SANDBOX_ID,
  sandboxEnvSecret,
  sandboxNetworkPolicy,
  sandboxPod,
  workspaceClaim,
} from "./objects.ts";
import { exitMessage, isReady, isTerminated, phaseOf, podProblem } from "./pod-state.ts";
import { PodWatch, type Waiter } from "./pod-watch.ts";
import { hasRestoreStep, restoreWaiting, unpackIntoRestoreStep, withRestoreStep } from "./restore.ts";
import { WorkspaceSnapshots } from "./snapshots.ts";
import { podExec, podPortForward } from "./streams.ts";

export { GC_LEASE } from "./lease.ts";
export { REQUIRED_ACCESS } from "./pod-watch.ts";

export interface KubernetesDriverOptions {
  kubeConfig: KubeConfig;
  placement: KubernetesPlacement;
  logger: Logger;
  /** How long a start waits for the Pod to become Ready (default 5 minutes). */
  startTimeoutMs?: number;
  /** Dial ports on the Pod's IP (sandbox-svc runs in the cluster) instead of `pods/portforward`. */
  dialPodIP?: boolean;
  /** How long the garbage collector's leader lease lasts without renewal (default 120 s). */
  gcLeaseSeconds?: number;
  /** Per-sandbox egress proxy credentials (required with `placement.egressProxyUrl`). */
  egressCredentials?: EgressCredentials;
  /** How long one API call (create, read, delete, list) may take before it fails (default 30 s). */
  apiTimeoutMs?: number;
}

/** `object`, when it carries this sandbox's id; else the start fails naming what holds the name. */
function ownedBySandbox<T extends { metadata?: { name?: string; labels?: Record<string, string> } }>(
  spec: SandboxRuntimeSpec,
  kind: string,
  object: T,
): T {
  if (object.metadata?.labels?.[SANDBOX_ID] === spec.id) return object;
  throw new Error(
    `the ${kind} ${object.metadata?.name ?? spec.slug} exists and is not this sandbox's (the slug ${spec.slug} names another object): delete it or recreate the sandbox with another slug`,
  );
}

/**
 * Sandboxes as Pods. One informer on the driver's label (pod-watch.ts) keeps every replica's view
 * of the Pods current, so status, readiness waits and unexpected exits need no polling. Writes
 * are idempotent by name (the slug), so replicas can share the work.
 */
export class KubernetesDriver implements SandboxDriver {
  readonly name = "kubernetes";
  /** A start's workspace archive is unpacked by an init step before the sandbox's container starts (restore.ts). */
  readonly restoresWorkspaceAtStart = true;
  private readonly options: KubernetesDriverOptions;
  private readonly core: CoreV1Api;
  private readonly networking: NetworkingV1Api;
  private readonly pods: PodWatch;
  private readonly lease: LeaderLease;
  private readonly snapshots: WorkspaceSnapshots;

  constructor(options: KubernetesDriverOptions) {
    this.options = options;
    // Every call of the API clients bounded; the informer's watch keeps its own inactivity timer.
    const kc = withRequestDeadline(options.kubeConfig, options.apiTimeoutMs ?? DEFAULT_API_TIMEOUT_MS);
    this.core = kc.makeApiClient(CoreV1Api);
    this.networking = kc.makeApiClient(NetworkingV1Api);
    const namespace = options.placement.namespace;
    this.snapshots = new WorkspaceSnapshots(
      { core: this.core, custom: kc.makeApiClient(CustomObjectsApi), networking: this.networking },
      namespace,
      options.placement.snapshotClassName,
    );
    this.lease = new LeaderLease(kc.makeApiClient(CoordinationV1Api), {
      namespace,
      name: GC_LEASE,
      durationSeconds: options.gcLeaseSeconds ?? 120,
    });
    this.pods = new PodWatch(kc, this.core, namespace, options.logger);
  }

  describe(): Record<string, unknown> {
    const p = this.options.placement;
    return {
      driver: "kubernetes",
      namespace: p.namespace,
      server: this.options.kubeConfig.getCurrentCluster()?.server ?? null,
      runtimeClassName: p.runtimeClassName ?? null,
      ports: this.options.dialPodIP ? "pod IP" : "pods/portforward",
    };
  }

  checkAvailable(): void {
    this.pods.checkAvailable();
  }

  /** cpu, memory and disk are the Pod's limits and its claim's size; a Pod spec has no process limit. */
  unenforcedLimits(resources: SandboxResources): UnenforcedLimits | undefined {
    if (resources.maxProcesses === undefined) return undefined;
    return {
      resources: ["maxProcesses"],
      reason: "Kubernetes has no process limit per Pod (the node's kubelet podPidsLimit applies)",
    };
  }

  validateImage(image: string): void {
    // An OCI reference: [registry[:port]/]path[:tag][@digest], or the platform's `default`.
    if (image === "default") return;
    if (
      !/^[a-z0-9]+([._-][a-z0-9]+)*(:\d+)?(\/[a-z0-9]+([._-]+[a-z0-9]+)*)*(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$/.test(
        image,
      )
    ) {
      throw new ProblemError("validation-failed", {
        detail: `${image} is not an OCI image reference`,
        errors: [{ pointer: "/body/image", message: "an OCI image reference such as docker.io/library/debian:12" }],
      });
    }
    // The node pulls it, with its own credentials and from wherever it reaches: only from the
    // registries the installation names (SANDBOX_K8S_IMAGE_REGISTRIES), when it names any.
    const allowed = this.options.placement.imageRegistries;
    const registry = imageRegistry(image);
    if (allowed && !allowed.includes(registry)) {
      throw new ProblemError("validation-failed", {
        detail: `${image}: ${registry} is not a registry sandboxes may use`,
        errors: [{ pointer: "/body/image", message: `an image from ${allowed.join(", ")}` }],
      });
    }
  }

  onEvent(listener: (event: DriverEvent) => void): () => void {
    return this.pods.onEvent(listener);
  }

  async status(sandboxId: string): Promise<DriverStatus> {
    await this.pods.whenSynced();
    const pod = this.pods.podOf(sandboxId);
    const problem = pod ? podProblem(pod) : undefined;
    return { phase: phaseOf(pod), ...(problem ? { message: problem.message } : {}) };
  }

  private async createOrGet<T>(create: () => Promise<T>, get: () => Promise<T>): Promise<T> {
    try {
      return await create();
    } catch (err) {
      if (statusCode(err) === 409) return get();
      throw err;
    }
  }

  async start(spec: SandboxRuntimeSpec, options: StartOptions = {}): Promise<void> {
    // An image accepted before the installation narrowed its registries does not start either.
    this.validateImage(spec.image);
    // Nothing is created in the cluster for a start the platform has not admitted yet.
    if (options.admitted) await options.admitted.catch(() => Promise.reject(new StartWithdrawnError(spec.id)));
    await this.pods.whenSynced();
    const { placement } = this.options;
    const namespace = placement.namespace;
    const timeoutMs = this.options.startTimeoutMs ?? 300_000;
    const deadline = Date.now() + timeoutMs;
    const archive = spec.workspaceArchive;
    try {
      const claimBody = workspaceClaim(spec, placement);
      // Names come from the slug: one taken by anything but this sandbox (a deleted sandbox's
      // leftovers, the namespace's own default-deny policy) is refused, never adopted or replaced.
      const claim: V1PersistentVolumeClaim = await this.createOrGet(
        () => this.core.createNamespacedPersistentVolumeClaim({ namespace, body: claimBody }),
        async () =>
          ownedBySandbox(
            spec,
            "PersistentVolumeClaim",
            await this.core.readNamespacedPersistentVolumeClaim({ namespace, name: claimName(spec.slug) }),
          ),
      );
      const policy = sandboxNetworkPolicy(spec, placement, claim);
      await this.createOrGet(
        () => this.networking.createNamespacedNetworkPolicy({ namespace, body: policy }),
        async () =>
          ownedBySandbox(
            spec,
            "NetworkPolicy",
            await this.networking.readNamespacedNetworkPolicy({ namespace, name: spec.slug }),
          ),
      );
      const secret = sandboxEnvSecret(
        spec,
        placement,
        claim,
        await sandboxProxyEnv(this.options.egressCredentials, placement, spec),
      );
      await this.createOrGet(
        () => this.core.createNamespacedSecret({ namespace, body: secret }),
        async () => {
          const name = envSecretName(spec.slug);
          ownedBySandbox(spec, "Secret", await this.core.readNamespacedSecret({ namespace, name }));
          return this.core.replaceNamespacedSecret({ namespace, name, body: secret });
        },
      );
      const existing = this.pods.get(spec.slug);
      if (existing) ownedBySandbox(spec, "Pod", existing);
      if (existing && this.staleFor(existing, archive !== undefined)) await this.deletePod(spec.slug);
      const pod = sandboxPod(spec, placement, claim);
      const body = archive ? withRestoreStep(pod, Math.ceil(timeoutMs / 1000)) : pod;
      await this.createOrGet(
        () => this.core.createNamespacedPod({ namespace, body }),
        async () => undefined,
      );
    } catch (err) {
      throw new Error(`Kubernetes API server: ${apiMessage(err)}`);
    }
    if (archive) {
      // The workspace is replaced while the restore step holds the sandbox's container back.
      const waiting = await this.waitFor(spec, restoreWaiting, deadline);
      try {
        await unpackIntoRestoreStep(this.options.kubeConfig, namespace, waiting, archive);
      } catch (err) {
        // The unpack ran and failed (the workspace is as it was): told apart from the Pod's failures.
        await this.deletePod(spec.slug).catch(() => {});
        throw new WorkspaceRestoreError((err as Error).message);
      }
    }
    await this.waitFor(spec, isReady, deadline);
  }

  /**
   * An existing Pod this start cannot use: ended or ending, or not matching whether the workspace
   * is to be restored (one with a restore step still initializing waits for an archive; one
   * without, or past that step, would never restore it).
   */
  private staleFor(pod: V1Pod, restoring: boolean): boolean {
    if (isTerminated(pod) || pod.metadata?.deletionTimestamp) return true;
    const initializing = hasRestoreStep(pod) && (pod.status?.phase ?? "Pending") === "Pending";
    return restoring !== initializing;
  }

  /**
   * Resolves with the Pod once `until` holds (Ready; or its restore step waiting); fails at once
   * when the Pod ended or cannot be fixed by waiting, else at `deadline`.
   */
  private waitFor(spec: SandboxRuntimeSpec, until: (pod: V1Pod) => boolean, deadline: number): Promise<V1Pod> {
    const timeoutMs = this.options.startTimeoutMs ?? 300_000;
    const name = spec.slug;
    return new Promise<V1Pod>((resolve, reject) => {
      let reported: string | undefined;
      const done = (err?: Error, pod?: V1Pod) => {
        clearTimeout(timer);
        this.pods.removeWaiter(name, check);
        if (err) reject(err);
        else resolve(pod as V1Pod);
      };
      const check: Waiter = (pod) => {
        if (!pod) return;
        if (until(pod)) return done(undefined, pod);
        if (isTerminated(pod)) return done(new Error(`sandbox failed to start: ${exitMessage(pod)}`));
        const problem = podProblem(pod);
        if (problem && problem.message !== reported) {
          reported = problem.message;
          this.pods.emit({ sandboxId: spec.id, status: { phase: "starting", message: problem.message } });
        }
        if (problem?.fatal) {
          void this.deletePod(name).catch(() => {});
          done(new Error(problem.message));
        }
      };
      const timer = setTimeout(
        () => {
          void this.deletePod(name).catch(() => {});
          done(
            new Error(
              `Pod ${name} was not ready within ${Math.round(timeoutMs / 1000)} s${reported ? `: ${reported}` : ""}`,
            ),
          );
        },
        Math.max(0, deadline - Date.now()),
      );
      this.pods.addWaiter(name, check);
      check(this.pods.get(name));
    });
  }

  /** Deletes a Pod and resolves once the informer saw it go (or it was not there). */
  private async deletePod(name: string): Promise<void> {
    const namespace = this.options.placement.namespace;
    const gone = new Promise<void>((resolve) => {
      const timer = setTimeout(finish, 60_000);
      function finish() {
        clearTimeout(timer);
        resolve();
      }
      const waiter: Waiter = (pod) => {
        if (pod) return;
        this.pods.removeWaiter(name, waiter);
        finish();
      };
      this.pods.addWaiter(name, waiter);
    });
    try {
      await this.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 5 });
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
      if (!this.pods.get(name)) return;
    }
    await gone;
  }

  async stop(sandboxId: string): Promise<void> {
    await this.pods.whenSynced();
    const pod = this.pods.podOf(sandboxId);
    if (!pod) return;
    const name = pod.metadata?.name as string;
    try {
      await this.deletePod(name);
      // The token and credential it holds are of no use to a stopped sandbox; start writes new ones.
      await this.core
        .deleteNamespacedSecret({ namespace: this.options.placement.namespace, name: envSecretName(name) })
        .catch((err) => {
          if (statusCode(err) !== 404) throw err;
        });
    } catch (err) {
      throw apiProblem(err);
    }
  }

  /**
   * The sandbox's Ready Pod. Another replica may have started it a moment ago, before this
   * replica's watch delivered it: then the API server is asked once.
   */
  private async runningPod(sandboxId: string): Promise<V1Pod> {
    await this.pods.whenSynced();
    let pod = this.pods.podOf(sandboxId);
    if (!pod || !isReady(pod)) {
      const namespace = this.options.placement.namespace;
      const labelSelector = `${DRIVER_SELECTOR},${SANDBOX_ID}=${sandboxId}`;
      // An API server that cannot be asked is named as such, not taken for a sandbox that is not running.
      const listed = await this.core.listNamespacedPod({ namespace, labelSelector }).catch((err: unknown) => {
        throw apiProblem(err);
      });
      pod = listed?.items[0];
    }
    if (!pod || !isReady(pod)) {
      throw new ProblemError("invalid-transition", { detail: `Sandbox ${sandboxId} is not running` });
    }
    return pod;
  }

  async exec(sandboxId: string, options: ExecOptions): Promise<ExecProcess> {
    const pod = await this.runningPod(sandboxId);
    return podExec(
      this.options.kubeConfig,
      this.options.placement.namespace,
      pod.metadata?.name as string,
      options,
      undefined,
      this.options.apiTimeoutMs,
    );
  }

  async portForward(sandboxId: string, port: number): Promise<Duplex> {
    const pod = await this.runningPod(sandboxId);
    const podIP = this.options.dialPodIP ? pod.status?.podIP : undefined;
    return podPortForward(
      this.options.kubeConfig,
      this.options.placement.namespace,
      pod.metadata?.name as string,
      port,
      podIP,
      this.options.apiTimeoutMs,
    );
  }

  /** Deletes the workspace claim; the garbage collector removes the Pod and NetworkPolicy it owns. */
  async removeWorkspace(sandboxId: string): Promise<void> {
    this.checkAvailable();
    const namespace = this.options.placement.namespace;
    const labelSelector = `${DRIVER_SELECTOR},${SANDBOX_ID}=${sandboxId}`;
    try {
      await this.snapshots.removeAll(sandboxId).catch((err) => {
        // No snapshot API (404): nothing to remove.
        if (statusCode(err) !== 404) throw err;
      });
      const claims = await this.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector });
      for (const claim of claims.items) {
        await this.core
          .deleteNamespacedPersistentVolumeClaim({ namespace, name: claim.metadata?.name as string })
          .catch((err) => {
            if (statusCode(err) !== 404) throw err;
          });
      }
    } catch (err) {
      throw apiProblem(err);
    }
  }

  async snapshotWorkspace(
    sandboxId: string,
    slug: string,
    revision: number,
    keep?: SnapshotRetention,
  ): Promise<string | undefined> {
    this.checkAvailable();
    let name: string | undefined;
    try {
      name = await this.snapshots.take(slug, revision);
    } catch (err) {
      throw new Error(`Kubernetes API server: ${apiMessage(err)}`);
    }
    if (name && keep) {
      // The snapshot is taken; one that cannot be deleted now goes at the next one, or with the sandbox.
      await this.snapshots.prune(sandboxId, keep).catch((err) => {
        this.options.logger.warn({ sandboxId, message: apiMessage(err) }, "old workspace snapshots not deleted");
      });
    }
    return name;
  }

  async restoreWorkspaceSnapshot(_sandboxId: string, slug: string, ref: string): Promise<void> {
    this.checkAvailable();
    try {
      await this.snapshots.restore(slug, ref);
    } catch (err) {
      throw new Error(`Kubernetes API server: ${apiMessage(err)}`);
    }
  }

  /**
   * Leader only (a Lease, so one replica at a time): deletes the claims, and with them the Pods and
   * policies, of sandboxes `exists` no longer knows, e.g. rows deleted while the API server was
   * down. Returns the sandbox ids collected.
   */
  async collectGarbage(exists: (sandboxIds: string[]) => Promise<Set<string>>): Promise<string[]> {
    if (!this.pods.up) return [];
    if (!(await this.lease.tryAcquire())) return [];
    const namespace = this.options.placement.namespace;
    const claims = await this.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: DRIVER_SELECTOR });
    const ids = new Set<string>();
    for (const object of [...claims.items, ...this.pods.list()]) {
      const id = object.metadata?.labels?.[SANDBOX_ID];
      if (id) ids.add(id);
    }
    if (ids.size === 0) return [];
    const live = await exists([...ids]);
    const gone = [...ids].filter((id) => !live.has(id));
    for (const id of gone) {
      const pod = this.pods.podOf(id);
      if (pod) await this.deletePod(pod.metadata?.name as string);
      await this.removeWorkspace(id);
      this.options.logger.info({ sandboxId: id }, "removed the Pod and claim of a deleted sandbox");
    }
    return gone;
  }

  /** Whether this replica holds the garbage collector's lease (after its last attempt). */
  get isGarbageCollector(): boolean {
    return this.lease.isHeld;
  }

  close(): Promise<void> {
    return this.pods.close();
  }
}
