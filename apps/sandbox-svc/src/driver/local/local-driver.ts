import { rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Duplex, type Readable } from "node:stream";
import { ProblemError } from "@agentplane/problem-details";
import type { Logger } from "@agentplane/service-kit";
import { stage } from "../../stages.ts";
import type {
  DriverEvent,
  DriverStatus,
  ExecOptions,
  ExecProcess,
  SandboxDriver,
  SandboxResources,
  SandboxRuntimeSpec,
  UnenforcedLimits,
} from "../types.ts";
import { CgroupWarmth, ownProcsFile } from "./cgroup-warmth.ts";
import {
  type CgroupSupport,
  createSandboxCgroup,
  detectCgroups,
  moveIntoCgroups,
  type SandboxCgroup,
  unenforcedLimits,
} from "./cgroups.ts";
import { egressEnv, type RelayTools, startEgressRelay } from "./egress-relay.ts";
import { execFailurePrefix, withShellExecErrors } from "./exec-errors.ts";
import { splitSandboxEnv } from "./host-env.ts";
import { chooseIdentity, DEFAULT_SANDBOX_HOST_UID, ownWorkspace, prepareDataDirs } from "./host-user.ts";
import { DEFAULT_IMAGE } from "./images.ts";
import {
  bwrapLauncher,
  enterArgv,
  type HostIdentity,
  holdsSysAdmin,
  parentPid,
  type SandboxProcesses,
} from "./namespaces.ts";
import { PrivateMounts } from "./private-mounts.ts";
import {
  childPids,
  exited,
  find,
  readChildPid,
  readReady,
  spawnDirect,
  spawnPiped,
  spawnTty,
  stderrTail,
  withCgroups,
} from "./process.ts";
import { bwrapArgs, SANDBOX_PATH, type SandboxPaths, withSandboxTerminal } from "./sandbox-args.ts";
import { type SpawnedChild, Spawner, type StdioSpec } from "./spawner.ts";

export type LocalIsolation = "bwrap" | "none";

export interface LocalDriverOptions {
  dataDir: string;
  /** Registered root filesystems: image name → directory. `default` always exists. */
  images?: Record<string, string>;
  isolation?: LocalIsolation;
  logger: Logger;
  /** Where to look for bwrap, nsenter and socat (tests point this at an empty directory). */
  searchPath?: string[];
  /** Where cgroups are mounted (/sys/fs/cgroup; tests point this at an empty directory: no limits). */
  cgroupRoot?: string;
  /**
   * The platform's egress proxy: a Unix socket per sandbox, relayed to the sandbox's 127.0.0.1:3128
   * (HTTP_PROXY/HTTPS_PROXY point there). Without it a sandbox has loopback only. Isolation `none`
   * shares the host's network and gets no proxy.
   */
  egress?: EgressSockets;
  /**
   * The host user a root service runs sandboxes as (default 65533); 0 maps them to root, as the
   * service's own user. Ignored when the service is not root: its sandboxes are its own user's.
   */
  hostUid?: number;
}

export interface EgressSockets {
  /** Starts the sandbox's proxy; resolves with the host path of its Unix socket. */
  open(sandboxId: string): Promise<string>;
  close(sandboxId: string): Promise<void>;
}

const SEARCH_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/** How long after a start moves into cgroups stay quick: the first exec usually comes within it. */
const FIRST_EXEC_WARMTH_MS = 30;

/** Relays stdio to a TCP port; run with the host's node inside the sandbox's network namespace when socat is absent. */
const NODE_RELAY =
  "const s=require('net').connect(+process.argv[1],'127.0.0.1');s.on('error',()=>process.exit(1));process.stdin.pipe(s).pipe(process.stdout);";

interface RunningSandbox {
  id: string;
  proc: SpawnedChild;
  /** Host pids of the sandbox's first process (inside its namespaces) and of the bwrap holding them. */
  processes: SandboxProcesses;
  env: Record<string, string>;
  workspace: string;
  cgroup: SandboxCgroup;
  execs: Set<ExecProcess>;
  /** The egress relay inside its network namespace, once it listens. */
  relay?: SpawnedChild;
  /**
   * Resolves once the egress relay listens (at once without egress): the sandbox is started
   * before that, and whatever needs its network (its main command, an exec, a forwarded port)
   * waits for it. Rejects when the relay did not come up; the sandbox is then killed.
   */
  relayReady: Promise<void>;
  /** Why the sandbox failed after its start answered (its relay), reported with its exit. */
  failure?: string;
  stopping: boolean;
  /** The main process has exited. */
  ended: boolean;
  gone: Promise<void>;
}

/**
 * Sandboxes as Linux namespaces through bubblewrap. One bwrap per sandbox holds the namespaces
 * (its main process keeps them alive); exec and sessions enter them with nsenter, so every process
 * of a sandbox shares its pid namespace, /tmp and workspace, and ports are reached by entering
 * only its network namespace.
 */
export class LocalDriver implements SandboxDriver {
  readonly name = "local";
  private readonly options: LocalDriverOptions;
  private readonly isolation: LocalIsolation;
  private readonly images: Record<string, string>;
  private readonly running = new Map<string, RunningSandbox>();
  private readonly starting = new Map<string, Promise<void>>();
  /** Cgroup removals still under way, per sandbox: a new start of the sandbox waits for its old one. */
  private readonly cgroupRemovals = new Map<string, Promise<void>>();
  /** Sandboxes that failed after their start resolved (their relay), until their next start. */
  private readonly failures = new Map<string, string>();
  private readonly listeners = new Set<(event: DriverEvent) => void>();
  private readonly tools: Partial<Record<"bwrap" | "nsenter" | "unshare" | "socat" | "setpriv" | "mount", string>>;
  /** Whose host user the sandboxes are, and how the driver enters them (namespaces.ts). */
  private readonly identity: HostIdentity;
  /** Why sandboxes run as root although the service could run them as a user of their own. */
  private readonly identityFallback: string | undefined;
  /** Binds directories out of the host user's reach for its bwrap (data dir or images under /root). */
  private readonly privateMounts: PrivateMounts | undefined;
  readonly cgroups: CgroupSupport;
  /** Keeps moves into cgroups quick while a start makes them (cgroup-warmth.ts). */
  private readonly warmth: CgroupWarmth;
  private readonly spawner = new Spawner();
  /** The data dir's shared directories were prepared (at the first start). */
  private dirsReady = false;

  constructor(options: LocalDriverOptions) {
    this.options = options;
    this.isolation = options.isolation ?? "bwrap";
    this.images = options.images ?? {};
    const dirs = options.searchPath ?? SEARCH_PATH;
    this.tools = {
      bwrap: find("bwrap", dirs),
      nsenter: find("nsenter", dirs),
      unshare: find("unshare", dirs),
      socat: find("socat", dirs),
      setpriv: find("setpriv", dirs),
      mount: find("mount", dirs),
    };
    this.cgroups = detectCgroups(options.cgroupRoot);
    this.warmth = new CgroupWarmth(ownProcsFile(this.cgroups, options.cgroupRoot));
    const { unshare, mount } = this.tools;
    const choice = chooseIdentity({
      privileged: holdsSysAdmin(),
      hostUid: options.hostUid ?? DEFAULT_SANDBOX_HOST_UID,
      dataDir: options.dataDir,
      imageDirs: Object.values(this.images),
      canBind: unshare !== undefined && mount !== undefined,
      mountParent: tmpdir(),
    });
    this.identity = choice.identity;
    this.identityFallback = choice.fallback;
    if (choice.fallback && this.isolation !== "none") options.logger.warn(choice.fallback);
    if (choice.outOfReach && unshare && mount && this.isolation !== "none") {
      const mounts = { tools: { unshare, mount }, parent: tmpdir(), dataDir: options.dataDir };
      this.privateMounts = new PrivateMounts({ ...mounts, outOfReach: choice.outOfReach });
      options.logger.info(this.privateMounts.reason);
    }
    // Forking the helper from this (large) process is the slow part: done before the first start.
    this.spawner.warm();
  }

  describe(): Record<string, unknown> {
    return {
      driver: "local",
      isolation: this.isolation,
      bwrap: this.tools.bwrap ?? null,
      sandboxHostUser: this.hostUserName(),
      ...(this.identityFallback ? { sandboxHostUserFallback: this.identityFallback } : {}),
      ...(this.privateMounts ? { sandboxDirsBound: this.privateMounts.reason } : {}),
      socat: this.tools.socat ?? null,
      cgroups: this.cgroups.version,
      cgroupControllers: this.cgroups.controllers,
      ...(this.cgroups.reason ? { cgroupsUnavailable: this.cgroups.reason } : {}),
    };
  }

  private hostUserName(): string {
    if (this.identity.kind === "uid") return `uid ${this.identity.uid}`;
    return this.identity.kind === "root" ? "root (no capabilities)" : "the service's user";
  }

  unenforcedLimits(resources: SandboxResources): UnenforcedLimits | undefined {
    return unenforcedLimits(this.cgroups, resources);
  }

  checkAvailable(): void {
    if (this.isolation === "none") return;
    const kind = this.identity.kind;
    if (
      !this.tools.bwrap ||
      !this.tools.nsenter ||
      (kind === "self" && !this.tools.unshare) ||
      (kind === "uid" && !this.tools.setpriv)
    ) {
      throw new ProblemError("service-unavailable", {
        detail:
          "The local sandbox driver needs bubblewrap: install the package `bubblewrap` (apt-get install bubblewrap) " +
          "and util-linux's nsenter, unshare and setpriv, or set SANDBOX_LOCAL_ISOLATION=none to run sandboxes without isolation.",
      });
    }
  }

  validateImage(image: string): void {
    if (image === DEFAULT_IMAGE || this.images[image]) return;
    const known = [DEFAULT_IMAGE, ...Object.keys(this.images)].join(", ");
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
    return join(this.options.dataDir, "workspaces", sandboxId);
  }

  start(spec: SandboxRuntimeSpec): Promise<void> {
    if (this.running.has(spec.id)) return Promise.resolve();
    const pending = this.starting.get(spec.id);
    if (pending) return pending;
    this.failures.delete(spec.id);
    const warm: { cool?: () => void } = {};
    const promise = this.launch(spec, warm).finally(() => {
      warm.cool?.();
      this.starting.delete(spec.id);
    });
    this.starting.set(spec.id, promise);
    return promise;
  }

  private sandboxEnv(spec: SandboxRuntimeSpec, workspace: string): Record<string, string> {
    const home = this.isolation === "none" ? workspace : "/workspace";
    return {
      PATH: SANDBOX_PATH,
      HOME: home,
      USER: "sandbox",
      LANG: "C.UTF-8",
      HOSTNAME: spec.slug,
      ...spec.env,
      ...(this.egressEnabled() ? egressEnv(spec.slug) : {}),
    };
  }

  private egressEnabled(): boolean {
    return this.options.egress !== undefined && this.isolation !== "none";
  }

  /** `warm.cool`, once set, ends keeping cgroup moves quick for this start (the caller calls it). */
  private async launch(spec: SandboxRuntimeSpec, warm: { cool?: () => void }): Promise<void> {
    this.checkAvailable();
    this.validateImage(spec.image);
    if (!this.dirsReady) {
      prepareDataDirs(this.options.dataDir, this.identity);
      this.dirsReady = true;
    }
    const workspace = this.workspaceDir(spec.id);
    await ownWorkspace(workspace, this.isolation === "none" ? { kind: "self" } : this.identity);
    const env = this.sandboxEnv(spec, workspace);
    let main = spec.command && spec.command.length > 0 ? spec.command : ["sleep", "infinity"];
    // What bwrap (on the host) is started with; the rest is exported inside (host-env.ts).
    let launchEnv = env;
    await this.cgroupRemovals.get(spec.id);
    stage("driver: launch");
    const cgroup = createSandboxCgroup(this.cgroups, spec.id, spec.resources);
    // Its processes are moved in at moments apart: the kernel's lock is kept quick meanwhile. Only
    // once its cgroups exist: a move waiting for the kernel holds the lock that making them takes.
    if (cgroup.procsFiles.length > 0) warm.cool = this.warmth.hold(FIRST_EXEC_WARMTH_MS);
    let argv: string[];
    if (this.isolation === "none") {
      this.options.logger.warn({ sandboxId: spec.id }, "SANDBOX_LOCAL_ISOLATION=none: sandbox runs without isolation");
      argv = main;
    } else {
      // The main process says "ready" on fd 4 once bwrap has finished the mounts, before exec'ing
      // the real command: entering the namespaces earlier would see a half-built root. It then
      // waits on fd 5 until it is in the sandbox's cgroups (the start waits for that) and, with
      // egress, the proxy relay listens, so its first request finds it (the start does not wait
      // for the relay; see `relayReady`).
      const script = 'printf ready >&4; exec 4>&-; read -r _ <&5; exec 5<&-; exec "$@"';
      ({ host: launchEnv, argv: main } = splitSandboxEnv(env, main));
      const signalReady = ["/bin/sh", "-c", script, "sh", ...main];
      const bwrap = bwrapLauncher(this.nsTools(), this.tools.bwrap as string, this.identity);
      const host: SandboxPaths = {
        workspace,
        runDir: join(this.options.dataDir, "run", spec.id),
        imageRoot: spec.image === DEFAULT_IMAGE ? undefined : this.images[spec.image],
      };
      const { seen, binds } = this.privateMounts?.plan(host) ?? { seen: host, binds: [] };
      argv = [...bwrap, ...bwrapArgs(spec, this.images, host, seen), "--", ...signalReady];
      if (this.privateMounts) argv = this.privateMounts.wrap(binds, argv);
    }
    const egress = this.egressEnabled() ? (this.options.egress as EgressSockets) : undefined;
    // The sandbox's proxy listens while bwrap builds the sandbox.
    const egressSocket = egress?.open(spec.id);
    egressSocket?.catch(() => {});
    stage("driver: args ready");
    const isolated = this.isolation !== "none";
    const stdio: StdioSpec = ["ignore", "ignore", "pipe", "pipe", "pipe", ...(isolated ? (["pipe"] as const) : [])];
    // Unisolated, the command joins the cgroups before it runs. bwrap's processes are moved in while
    // it builds the sandbox: the first move after a quiet spell waits ~10 ms for the kernel.
    const proc = await this.spawnChild(isolated ? argv : withCgroups(cgroup.procsFiles, argv), launchEnv, {
      cwd: this.isolation === "none" ? workspace : "/",
      stdio,
    });
    stage("driver: bwrap spawned");
    const [, , errors, info, ready, go] = proc.stdio;
    const stderr: Buffer[] = [];
    errors?.on("data", (chunk: Buffer) => {
      stderr.push(chunk);
      if (stderr.length > 64) stderr.shift();
    });
    const gone = proc.exited.then(() => {});
    let processes: SandboxProcesses = { pid: 0, holder: 0 };
    let relayUp: Promise<SpawnedChild> | undefined;
    let relayError: Error | undefined;
    try {
      if (isolated) {
        const childPid = readChildPid(info as Readable, proc.exited).then((pid): SandboxProcesses => {
          stage("driver: child pid");
          return { pid, holder: parentPid(pid) };
        });
        // bwrap and its child run nothing of the sandbox's; the process the child forks runs its
        // command only once told to (fd 5), after it is moved in too. bwrap (the spawned process,
        // the holder) is moved as soon as it runs, so that the kernel's wait starts early; its
        // child may be cloned before that, and is moved once named.
        const holderJoined = proc.pid.then((p) => moveIntoCgroups(cgroup.procsFiles, p ? [p] : []));
        const bwrapJoined = Promise.all([holderJoined, childPid]).then(([, p]) =>
          moveIntoCgroups(cgroup.procsFiles, [p.pid]),
        );
        bwrapJoined.catch(() => {});
        // The network namespace exists once bwrap names its child: the relay starts in it while
        // bwrap is still building the mounts, and may still be starting once they are done.
        relayUp = egress
          ? childPid.then(async (p) => {
              const socketPath = (await egressSocket) as string;
              const enterNet = enterArgv(this.nsTools(), p, "net", this.identity);
              // In the sandbox's cgroups: socat forks a child per connection the sandbox opens, and
              // those count against its process and memory limits, not the host's.
              const relay = await startEgressRelay(
                (a, e) => this.spawnChild(withCgroups(cgroup.procsFiles, a), e),
                this.relayTools(),
                enterNet,
                socketPath,
              );
              stage("driver: relay listens");
              return relay;
            })
          : undefined;
        relayUp?.catch((err: Error) => {
          relayError = err;
        });
        [processes] = await Promise.all([
          childPid,
          readReady(ready as Readable, proc.exited).then(() => stage("driver: mounts ready")),
        ]);
        // A relay that failed already fails the start itself.
        if (relayError) throw relayError;
        // The process bwrap's child forked, which will run the command: in before the start answers.
        if (cgroup.procsFiles.length > 0) {
          await bwrapJoined;
          await moveIntoCgroups(cgroup.procsFiles, childPids(processes.pid));
          stage("driver: in cgroups");
        }
      }
      stage("driver: started");
    } catch (err) {
      const relay = await relayUp?.catch(() => undefined);
      relay?.kill("SIGKILL");
      proc.kill("SIGKILL");
      await gone;
      await egress?.close(spec.id);
      await cgroup.remove();
      throw new Error(`sandbox failed to start: ${stderrTail(stderr) || (err as Error).message}`);
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
    if (isolated) {
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
        this.options.logger.warn({ sandboxId: spec.id, err }, "egress relay failed: sandbox killed");
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
      this.options.logger.debug({ sandboxId: spec.id, enforced: cgroup.enforced }, "cgroup limits");
  }

  /**
   * Children are forked by the spawner helper: forking this process (with PGlite, all-in-one,
   * hundreds of MB resident) costs far more than the bwrap or relay it starts. This process
   * spawns them itself only when the helper cannot start.
   */
  private async spawnChild(
    argv: string[],
    env: Record<string, string>,
    options: { cwd?: string; stdio?: StdioSpec } = {},
  ): Promise<SpawnedChild> {
    const spawnOptions = { cwd: options.cwd, stdio: options.stdio ?? (["pipe", "pipe", "pipe"] as StdioSpec) };
    return (await this.spawner.spawnChild(argv, env, spawnOptions)) ?? spawnDirect(argv, env, spawnOptions);
  }

  private relayTools(): RelayTools {
    return { socat: this.tools.socat, setpriv: this.tools.setpriv };
  }

  private nsTools() {
    return { nsenter: this.tools.nsenter as string, unshare: this.tools.unshare, setpriv: this.tools.setpriv };
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

  async exec(sandboxId: string, options: ExecOptions): Promise<ExecProcess> {
    const running = await this.requireReady(sandboxId);
    let env = { ...running.env, ...(options.tty ? { TERM: "xterm-256color" } : {}), ...options.env };
    let argv: string[];
    let cwd: string | undefined;
    let exportsInside = false;
    if (this.isolation === "none") {
      argv = options.argv;
      cwd = options.cwd ? join(running.workspace, options.cwd.replace(/^\/workspace\/?/, "")) : running.workspace;
    } else {
      const inCwd = options.cwd
        ? ["/bin/sh", "-c", 'cd -- "$0" && exec "$@"', options.cwd, ...options.argv]
        : options.argv;
      const split = splitSandboxEnv(env, inCwd);
      env = split.host;
      exportsInside = split.argv !== inCwd;
      const command = split.argv;
      const inner = options.tty ? withSandboxTerminal(command) : command;
      const nsenter = enterArgv(this.nsTools(), running.processes, "all", this.identity);
      argv = withCgroups(running.cgroup.procsFiles, [...nsenter, "--", ...inner]);
    }
    let proc = options.tty
      ? await spawnTty(argv, env, { cols: options.cols ?? 80, rows: options.rows ?? 24 }, cwd)
      : ((await this.spawner.spawn(argv, env, cwd)) ?? spawnPiped(argv, env, cwd));
    // nsenter executes the command: one the sandbox lacks is told as a shell tells it, not by nsenter.
    if (this.isolation !== "none" && !options.tty) {
      const program = options.argv[0] as string;
      proc = withShellExecErrors(proc, program, execFailurePrefix(program, options.cwd, exportsInside));
    }
    running.execs.add(proc);
    void proc.exited.then(() => running.execs.delete(proc));
    return proc;
  }

  async portForward(sandboxId: string, port: number): Promise<Duplex> {
    const running = await this.requireReady(sandboxId);
    if (this.isolation === "none") return connect(port, "127.0.0.1");
    const relay = this.tools.socat
      ? [this.tools.socat, "-", `TCP:127.0.0.1:${port}`]
      : [process.execPath, "-e", NODE_RELAY, String(port)];
    const relayArgv = [...enterArgv(this.nsTools(), running.processes, "net", this.identity), "--", ...relay];
    const relayEnv = { PATH: SANDBOX_PATH };
    const proc = (await this.spawner.spawn(relayArgv, relayEnv)) ?? spawnPiped(relayArgv, relayEnv);
    running.execs.add(proc);
    void proc.exited.then(() => running.execs.delete(proc));
    const duplex = Duplex.from({ readable: proc.stdout as Readable, writable: proc.stdin });
    duplex.on("close", () => proc.kill());
    // The relay exits when nothing listens on the port ("premature close"); callers see the close,
    // and an error without a listener must not take the service down.
    duplex.on("error", () => {});
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

  async removeWorkspace(sandboxId: string): Promise<void> {
    await rm(this.workspaceDir(sandboxId), { recursive: true, force: true });
    await rm(join(this.options.dataDir, "run", sandboxId), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    await Promise.all([...this.running.keys()].map((id) => this.stop(id)));
    this.spawner.close();
    this.warmth.close();
    this.privateMounts?.close();
  }
}
