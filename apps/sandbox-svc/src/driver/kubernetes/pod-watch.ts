import { ProblemError } from "@agentplane/problem-details";
import type { Logger } from "@agentplane/service-kit";
import {
  AuthorizationV1Api,
  type CoreV1Api,
  type Informer,
  type KubeConfig,
  makeInformer,
  type ObjectCache,
  type V1Pod,
} from "@kubernetes/client-node";
import type { DriverEvent } from "../types.ts";
import { apiMessage } from "./api-errors.ts";
import { GC_LEASE } from "./lease.ts";
import { DRIVER_SELECTOR, SANDBOX_ID } from "./objects.ts";
import { exitMessage, isTerminated, phaseOf } from "./pod-state.ts";

/** What the driver does through the API server: checked at start, a missing one is named in readiness. */
export const REQUIRED_ACCESS: {
  verb: string;
  resource: string;
  subresource?: string;
  group?: string;
  name?: string;
}[] = [
  ...["get", "list", "watch", "create", "delete"].map((verb) => ({ verb, resource: "pods" })),
  { verb: "create", resource: "pods", subresource: "exec" },
  { verb: "create", resource: "pods", subresource: "portforward" },
  ...["get", "list", "create", "delete"].map((verb) => ({ verb, resource: "persistentvolumeclaims" })),
  ...["get", "create", "delete"].map((verb) => ({ verb, resource: "networkpolicies", group: "networking.k8s.io" })),
  ...["get", "create", "update", "delete"].map((verb) => ({ verb, resource: "secrets" })),
  { verb: "create", resource: "leases", group: "coordination.k8s.io" },
  // The Role names the lease it may read and renew: a review without that name would be refused.
  ...["get", "update"].map((verb) => ({ verb, resource: "leases", group: "coordination.k8s.io", name: GC_LEASE })),
];

const RETRY_AFTER_SECONDS = 5;
const MAX_BACKOFF_MS = 30_000;
const FIRST_SYNC_WAIT_MS = 5000;

/** Told each new state of a Pod by name (undefined: it was deleted). */
export type Waiter = (pod: V1Pod | undefined) => void;

/**
 * The driver's view of its Pods: one informer (list once, then watch) on the driver's label, so
 * status, readiness waits and unexpected exits need no polling. Up until a list or watch fails;
 * then down (named in readiness) until a reconnect with backoff succeeds. The first list also
 * checks that this identity may do everything the driver does.
 */
export class PodWatch {
  private readonly informer: Informer<V1Pod> & ObjectCache<V1Pod>;
  private readonly authorization: AuthorizationV1Api;
  private readonly listeners = new Set<(event: DriverEvent) => void>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** Last phase seen per Pod name: an exit is a change into a terminal phase. */
  private readonly phases = new Map<string, string>();
  private health: { up: boolean; message: string } = { up: true, message: "" };
  private readonly synced: Promise<void>;
  private markSynced: () => void = () => {};
  private backoffMs = 1000;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private attempts = 0;
  private failedAttempt = 0;

  private readonly namespace: string;
  private readonly logger: Logger;

  constructor(kc: KubeConfig, core: CoreV1Api, namespace: string, logger: Logger) {
    this.namespace = namespace;
    this.logger = logger;
    this.authorization = kc.makeApiClient(AuthorizationV1Api);
    this.synced = new Promise((resolve) => {
      this.markSynced = resolve;
    });
    this.informer = makeInformer(
      kc,
      `/api/v1/namespaces/${namespace}/pods`,
      async () => {
        const list = await core.listNamespacedPod({ namespace, labelSelector: DRIVER_SELECTOR });
        await this.checkAccess();
        return list;
      },
      DRIVER_SELECTOR,
    );
    this.informer.on("add", (pod) => this.observe(pod));
    this.informer.on("update", (pod) => this.observe(pod));
    this.informer.on("delete", (pod) => this.observe(pod, true));
    this.informer.on("error", (err) => this.lost(err));
    this.connect();
  }

  get up(): boolean {
    return this.health.up && !this.closed;
  }

  /** The cached Pod of that name. */
  get(name: string): V1Pod | undefined {
    return this.informer.get(name, this.namespace);
  }

  list(): readonly V1Pod[] {
    return this.informer.list(this.namespace);
  }

  /** The cached Pod of a sandbox (after the first sync). */
  podOf(sandboxId: string): V1Pod | undefined {
    return this.list().find((p) => p.metadata?.labels?.[SANDBOX_ID] === sandboxId);
  }

  onEvent(listener: (event: DriverEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: DriverEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  addWaiter(name: string, waiter: Waiter): void {
    const set = this.waiters.get(name) ?? new Set();
    set.add(waiter);
    this.waiters.set(name, set);
  }

  removeWaiter(name: string, waiter: Waiter): void {
    const set = this.waiters.get(name);
    set?.delete(waiter);
    if (set?.size === 0) this.waiters.delete(name);
  }

  /** A 503 problem naming why the API server is unavailable, when it is. */
  checkAvailable(): void {
    if (this.health.up) return;
    throw new ProblemError("service-unavailable", {
      detail: `The Kubernetes API server is unavailable: ${this.health.message}`,
      headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
    });
  }

  /** Waits (a few seconds at most) for the first list, then answers as readiness does. */
  async whenSynced(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.synced, new Promise((resolve) => (timer = setTimeout(resolve, FIRST_SYNC_WAIT_MS)))]);
    clearTimeout(timer);
    this.checkAvailable();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.informer.stop();
  }

  private connect(): void {
    const attempt = ++this.attempts;
    this.informer.start().then(
      () => {
        // The informer reports a failed list through its error callback and still resolves.
        if (this.closed || this.failedAttempt === attempt) return;
        this.backoffMs = 1000;
        if (!this.health.up) this.logger.info({ driver: "kubernetes" }, "Kubernetes API server reachable");
        this.health = { up: true, message: "" };
        this.markSynced();
      },
      (err) => this.lost(err),
    );
  }

  /** The watch or list failed: down until a reconnect (with backoff) succeeds. */
  private lost(err: unknown): void {
    if (this.closed) return;
    this.failedAttempt = this.attempts;
    const message = apiMessage(err);
    if (this.health.up || this.health.message !== message) {
      this.logger.warn({ driver: "kubernetes", message }, "Kubernetes API server unavailable");
    }
    this.health = { up: false, message };
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.closed) this.connect();
    }, this.backoffMs);
    this.retryTimer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
  }

  /** Asks the API server whether this identity may do everything the driver does (a 403 later is confusing). */
  private async checkAccess(): Promise<void> {
    const namespace = this.namespace;
    const answers = await Promise.all(
      REQUIRED_ACCESS.map(async (access) => {
        const review = await this.authorization.createSelfSubjectAccessReview({
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec: {
              resourceAttributes: {
                namespace,
                verb: access.verb,
                resource: access.resource,
                ...(access.subresource ? { subresource: access.subresource } : {}),
                ...(access.name ? { name: access.name } : {}),
                group: access.group ?? "",
              },
            },
          },
        });
        return { access, allowed: review.status?.allowed === true };
      }),
    );
    const missing = answers
      .filter((a) => !a.allowed)
      .map(({ access }) => `${access.verb} ${access.resource}${access.subresource ? `/${access.subresource}` : ""}`);
    if (missing.length > 0) throw new Error(`RBAC: cannot ${missing.join(", ")} in the namespace "${namespace}"`);
  }

  private observe(pod: V1Pod, deleted = false): void {
    const name = pod.metadata?.name as string;
    const id = pod.metadata?.labels?.[SANDBOX_ID];
    const previous = this.phases.get(name);
    const phase = deleted ? "Deleted" : (pod.status?.phase ?? "Pending");
    if (deleted) this.phases.delete(name);
    else this.phases.set(name, phase);
    for (const waiter of this.waiters.get(name) ?? []) waiter(deleted ? undefined : pod);
    if (!id || previous === undefined || previous === phase) return;
    const wasLive = previous === "Running" || previous === "Pending";
    if (wasLive && !deleted && isTerminated(pod)) {
      this.emit({ sandboxId: id, status: { phase: phaseOf(pod), message: exitMessage(pod) } });
    } else if (wasLive && deleted) {
      // Ours, another replica's or an eviction: only a sandbox recorded as running takes it as a failure.
      this.emit({ sandboxId: id, status: { phase: "failed", message: "Pod was deleted" } });
    }
  }
}
