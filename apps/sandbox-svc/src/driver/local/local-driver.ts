import { readdir, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { ProblemError } from "@agentplane/problem-details";
import { stage } from "../../stages.ts";
import type {
  DriverEvent,
  DriverStatus,
  ExecOptions,
  ExecProcess,
  SandboxDriver,
  SandboxResources,
  SandboxRuntimeSpec,
  StartOptions,
  UnenforcedLimits,
} from "../types.ts";
import { StartWithdrawnError } from "../types.ts";
import { isSwapLeftover } from "../workspace-swap.ts";
import { CgroupWarmth, ownProcsFile } from "./cgroup-warmth.ts";
import {
  type CgroupSupport,
  createSandboxCgroup,
  detectCgroups,
  type SandboxCgroup,
  unenforcedLimits,
} from "./cgroups.ts";
import {
  type DriverContext,
  egressSockets,
  findTools,
  type LocalDriverOptions,
  type RunningSandbox,
} from "./driver-context.ts";
import { egressEnv } from "./egress-relay.ts";
import { spawnExec, spawnPortRelay } from "./enter.ts";
import { chooseIdentity, DEFAULT_SANDBOX_HOST_UID, ownWorkspace, prepareDataDirs } from "./host-user.ts";
import { DEFAULT_IMAGE } from "./images.ts";
import { launchSandbox, undoLaunch } from "./launch.ts";
import { holdsSysAdmin, runnableByAnyone } from "./namespaces.ts";
import { PrivateMounts } from "./private-mounts.ts";
import { exited, stderrTail } from "./process.ts";
import { SANDBOX_PATH } from "./sandbox-args.ts";
import { Spawner } from "./spawner.ts";

export type { EgressSockets, LocalDriverOptions, LocalIsolation } from "./driver-context.ts";

/** How long after a start moves into cgroups stay quick: the first exec usually comes within it. */
const FIRST_EXEC_WARMTH_MS = 30;

/**
 * Sandboxes as Linux namespaces through bubblewrap. One bwrap per sandbox holds the namespaces
 * (its main process keeps them alive); exec and sessions enter them with nsenter, so every process
 * of a sandbox shares its pid namespace, /tmp and workspace, and ports are reached by entering
 * only its network namespace. Starting one is launch.ts; entering one, enter.ts.
 */
export class LocalDriver implements SandboxDriver {
  readonly name = "local";
  private readonly ctx: DriverContext;
  private readonly running = new Map<string, RunningSandbox>();
  private readonly starting = new Map<string, Promise<void>>();
  /** Cgroup removals still under way, per sandbox: a new start of the sandbox waits for its old one. */
  private readonly cgroupRemovals = new Map<string, Promise<void>>();
  /** Sandboxes that failed after their start resolved (their relay), until their next start. */
  private readonly failures = new Map<string, string>();
  private readonly listeners = new Set<(event: DriverEvent) => void>();
  /** Why sandboxes run as root although the service could run them as a user of their own. */
  private readonly identityFallback: string | undefined;
  readonly cgroups: CgroupSupport;
  /** Keeps moves into cgroups quick while a start makes them (cgroup-warmth.ts). */
  private readonly warmth: CgroupWarmth;
  /** The data dir's shared directories were prepared (at the first start). */
  private dirsReady = false;

  constructor(options: LocalDriverOptions) {
    const isolation = options.isolation ?? "bwrap";
    const images = options.images ?? {};
    const tools = findTools(options.searchPath);
    this.cgroups = detectCgroups(options.cgroupRoot);
    this.warmth = new CgroupWarmth(ownProcsFile(this.cgroups, options.cgroupRoot));
    const { unshare, mount } = tools;
    const choice = chooseIdentity({
      privileged: holdsSysAdmin(),
      hostUid: options.hostUid ?? DEFAULT_SANDBOX_HOST_UID,
      dataDir: options.dataDir,
      imageDirs: Object.values(images),
      canBind: unshare !== undefined && mount !== undefined,
      mountParent: tmpdir(),
    });
    this.identityFallback = choice.fallback;
    if (choice.fallback && isolation !== "none") options.logger.warn(choice.fallback);
    let privateMounts: PrivateMounts | undefined;
    if (choice.outOfReach && unshare && mount && isolation !== "none") {
      const mounts = { tools: { unshare, mount }, parent: tmpdir(), dataDir: options.dataDir };
      privateMounts = new PrivateMounts({ ...mounts, outOfReach: choice.outOfReach });
      options.logger.info(privateMounts.reason);
    }
    const spawner = new Spawner();
    const bwrapForAnyone = runnableByAnyone(tools.bwrap);
    this.ctx = { options, isolation, images, tools, identity: choice.identity, privateMounts, bwrapForAnyone, spawner };
    // Forking the helper from this (large) process is the slow part: done before the first start.
    spawner.warm();
  }

  describe(): Record<string, unknown> {
    const { isolation, tools, privateMounts } = this.ctx;
    return {
      driver: "local",
      isolation,
      bwrap: tools.bwrap ?? null,
      sandboxHostUser: this.hostUserName(),
      ...(this.identityFallback ? { sandboxHostUserFallback: this.identityFallback } : {}),
      ...(privateMounts ? { sandboxDirsBound: privateMounts.reason } : {}),
      socat: tools.socat ?? null,
      cgroups: this.cgroups.version,
      cgroupControllers: this.cgroups.controllers,
      ...(this.cgroups.reason ? { cgroupsUnavailable: this.cgroups.reason } : {}),
    };
  }

  private hostUserName(): string {
    const { identity } = this.ctx;
    if (identity.kind === "uid") return `uid ${identity.uid}`;
    return identity.kind === "root" ? "root (no capabilities)" : "the service's user";
  }

  unenforcedLimits(resources: SandboxResources): UnenforcedLimits | undefined {
    return unenforcedLimits(this.cgroups, resources);
  }

  checkAvailable(): void {
    const { isolation, tools, identity } = this.ctx;
    if (isolation === "none") return;
    const kind = identity.kind;
    if (!tools.bwrap || !tools.nsenter || (kind === "self" && !tools.unshare) || (kind === "uid" && !tools.setpriv)) {
      throw new ProblemError("service-unavailable", {
        detail:
          "The local sandbox driver needs bubblewrap: install the package `bubblewrap` (apt-get install bubblewrap) " +
          "and util-linux's nsenter, unshare and setpriv, or set SANDBOX_LOCAL_ISOLATION=none to run sandboxes without isolation.",
      });
    }
  }

  validateImage(image: string): void {
    const { images } = this.ctx;
    // Own names only: `constructor` or `__proto__` is in every object, never an image.
    if (image === DEFAULT_IMAGE || Object.hasOwn(images, image)) return;
    const known = [DEFAULT_IMAGE, ...Object.keys(images)].join(", ");
    throw new ProblemError("validation-failed", {
      detail: `Unknown image ${image} for the local driver (known: ${known})`,
      errors: [{ pointer: "/body/image", message: `unknown image; known: ${known}` }],
    });
  }

  onEvent(listener: (event: DriverEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async status(sandboxId: string): Promise<DriverStatus> {
    if (this.starting.has(sandboxId)) return { phase: "starting" };
    return this.running.has(sandboxId) ? { phase: "running" } : { phase: "stopped" };
  }

  failedAfterStart(sandboxId: string): string | undefined {
    return this.failures.get(sandboxId);
  }

  workspaceDir(sandboxId: string): string {
    return join(this.ctx.options.dataDir, "workspaces", sandboxId);
  }

  start(spec: SandboxRuntimeSpec, options: StartOptions = {}): Promise<void> {
    if (this.running.has(spec.id)) return Promise.resolve();
    const pending = this.starting.get(spec.id);
    if (pending) return pending;
    this.failures.delete(spec.id);
    const warm: { cool?: () => void } = {};
    const admission = options.admitted ? { promise: options.admitted, refused: false } : undefined;
    // Handled here: the caller may have its answer before the launch gets to wait for it.
    admission?.promise.catch(() => {
      admission.refused = true;
    });
    const promise = this.launch(spec, warm, admission).finally(() => {
      warm.cool?.();
      this.starting.delete(spec.id);
    });
    this.starting.set(spec.id, promise);
    return promise;
  }

  private sandboxEnv(spec: SandboxRuntimeSpec, workspace: string): Record<string, string> {
    const home = this.ctx.isolation === "none" ? workspace : "/workspace";
    return {
      PATH: SANDBOX_PATH,
      HOME: home,
      USER: "sandbox",
      LANG: "C.UTF-8",
      HOSTNAME: spec.slug,
      ...spec.env,
      ...(egressSockets(this.ctx) ? egressEnv(spec.slug) : {}),
    };
  }

  /** `warm.cool`, once set, ends keeping cgroup moves quick for this start (the caller calls it). */
  private async launch(
    spec: SandboxRuntimeSpec,
    warm: { cool?: () => void },
    admission: { promise: Promise<void>; refused: boolean } | undefined,
  ): Promise<void> {
    const { options, isolation, identity } = this.ctx;
    this.checkAvailable();
    this.validateImage(spec.image);
    if (!this.dirsReady) {
      prepareDataDirs(options.dataDir, identity);
      this.dirsReady = true;
    }
    // Unisolated, the command runs as it is spawned: nothing is begun before the start is admitted.
    if (admission && isolation === "none") {
      await admission.promise.catch(() => Promise.reject(new StartWithdrawnError(spec.id)));
      admission = undefined;
    }
    const workspace = this.workspaceDir(spec.id);
    await ownWorkspace(workspace, isolation === "none" ? { kind: "self" } : identity);
    const env = this.sandboxEnv(spec, workspace);
    await this.cgroupRemovals.get(spec.id);
    if (admission?.refused) throw new StartWithdrawnError(spec.id);
    stage("driver: launch");
    const cgroup = createSandboxCgroup(this.cgroups, spec.id, spec.resources);
    // Its processes are moved in at moments apart: the kernel's lock is kept quick meanwhile. Only
    // once its cgroups exist: a move waiting for the kernel holds the lock that making them takes.
    if (cgroup.procsFiles.length > 0) warm.cool = this.warmth.hold(FIRST_EXEC_WARMTH_MS);
    const { proc, processes, relayUp, go, stderr, gone } = await launchSandbox(this.ctx, spec, workspace, env, cgroup);
    const egress = egressSockets(this.ctx);
    // A start begun before it was admitted: its main process waits (on fd 5) until it is.
    if (admission) {
      try {
        await admission.promise;
      } catch {
        await undoLaunch(this.ctx, spec.id, { proc, relayUp, gone }, async () => {
          await exited(processes.pid);
          await this.removeCgroup(spec.id, cgroup);
        });
        throw new StartWithdrawnError(spec.id);
      }
    }
    const running: RunningSandbox = {
      id: spec.id,
      proc,
      processes,
      env,
      workspace,
      cgroup,
      execs: new Set(),
      relayReady: Promise.resolve(),
      stopping: false,
      ended: false,
      gone,
    };
    // The command runs once told to (its processes are in its cgroups by now), after the relay
    // listens when there is one.
    if (isolation !== "none") {
      running.relayReady = Promise.resolve(relayUp).then((relay) => {
        // A sandbox gone meanwhile keeps no relay: it would hold the network namespace.
        if (relay && running.ended) {
          relay.kill("SIGKILL");
          throw new Error("the sandbox exited before its egress relay listened");
        }
        running.relay = relay;
        go?.end("go\n");
      });
      running.relayReady.catch((err: Error) => {
        if (running.ended || running.stopping) return;
        running.failure = `egress relay failed to start: ${err.message}`;
        this.failures.set(spec.id, running.failure);
        options.logger.warn({ sandboxId: spec.id, err }, "egress relay failed: sandbox killed");
        proc.kill("SIGKILL");
      });
    }
    this.running.set(spec.id, running);
    void proc.exited.then(({ exitCode, signal }) => {
      running.ended = true;
      this.running.delete(spec.id);
      for (const exec of running.execs) exec.kill();
      running.relay?.kill("SIGKILL");
      if (egress) void egress.close(spec.id);
      this.removeCgroup(spec.id, cgroup);
      if (running.stopping) return;
      const message =
        running.failure ??
        `main process exited (${signal ?? `code ${exitCode}`})${stderrTail(stderr) ? `: ${stderrTail(stderr)}` : ""}`;
      const failed = exitCode !== 0 || running.failure !== undefined;
      const status: DriverStatus = { phase: failed ? "failed" : "stopped", message };
      for (const listener of this.listeners) listener({ sandboxId: spec.id, status });
    });
    if (cgroup.enforced.length > 0)
      options.logger.debug({ sandboxId: spec.id, enforced: cgroup.enforced }, "cgroup limits");
  }

  private require(sandboxId: string): RunningSandbox {
    const running = this.running.get(sandboxId);
    if (!running) throw new ProblemError("invalid-transition", { detail: `Sandbox ${sandboxId} is not running` });
    return running;
  }

  /** A running sandbox whose network is ready: its egress relay listens (waited for while it starts). */
  private async requireReady(sandboxId: string): Promise<RunningSandbox> {
    const running = this.require(sandboxId);
    try {
      await running.relayReady;
    } catch (err) {
      throw new ProblemError("invalid-transition", {
        detail: `Sandbox ${sandboxId} failed: ${running.failure ?? (err as Error).message}`,
      });
    }
    return running;
  }

  /** A process of the sandbox's, killed with it (a stop, or its main process's exit). */
  private track(running: RunningSandbox, proc: ExecProcess): void {
    running.execs.add(proc);
    void proc.exited.then(() => running.execs.delete(proc));
  }

  async exec(sandboxId: string, options: ExecOptions): Promise<ExecProcess> {
    const running = await this.requireReady(sandboxId);
    const proc = await spawnExec(this.ctx, running, options);
    this.track(running, proc);
    return proc;
  }

  async portForward(sandboxId: string, port: number): Promise<Duplex> {
    const running = await this.requireReady(sandboxId);
    if (this.ctx.isolation === "none") return connect(port, "127.0.0.1");
    const { duplex, proc } = await spawnPortRelay(this.ctx, running, port);
    this.track(running, proc);
    return duplex;
  }

  async stop(sandboxId: string): Promise<void> {
    await this.starting.get(sandboxId)?.catch(() => {});
    const running = this.running.get(sandboxId);
    if (!running) return;
    running.stopping = true;
    for (const exec of running.execs) exec.kill();
    // The bwrap we started dies; --die-with-parent takes the sandbox's pid 1, and with it every process.
    running.proc.kill("SIGKILL");
    await running.gone;
    // A relay still starting is killed once it listens: a stop leaves none behind.
    await running.relayReady.catch(() => {});
    await exited(running.processes.pid);
    this.running.delete(sandboxId);
    await this.removeCgroup(sandboxId, running.cgroup);
  }

  private removeCgroup(sandboxId: string, cgroup: SandboxCgroup): Promise<void> {
    const removal = cgroup.remove().finally(() => {
      if (this.cgroupRemovals.get(sandboxId) === removal) this.cgroupRemovals.delete(sandboxId);
    });
    this.cgroupRemovals.set(sandboxId, removal);
    return removal;
  }

  async hasSwapLeftovers(sandboxId: string): Promise<boolean> {
    // Names only: nothing the sandbox made is followed or opened from outside it.
    const names = await readdir(this.workspaceDir(sandboxId)).catch(() => [] as string[]);
    return names.some(isSwapLeftover);
  }

  async removeWorkspace(sandboxId: string): Promise<void> {
    await rm(this.workspaceDir(sandboxId), { recursive: true, force: true });
    await rm(join(this.ctx.options.dataDir, "run", sandboxId), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    await Promise.all([...this.running.keys()].map((id) => this.stop(id)));
    this.ctx.spawner.close();
    this.warmth.close();
    this.ctx.privateMounts?.close();
  }
}
