import { join } from "node:path";
import type { Duplex, Readable } from "node:stream";
import { stage } from "../../stages.ts";
import type { SandboxRuntimeSpec } from "../types.ts";
import type { SandboxCgroup } from "./cgroups.ts";
import { type DriverContext, egressSockets, namespaceTools, relayTools } from "./driver-context.ts";
import { startEgressRelay } from "./egress-relay.ts";
import { splitSandboxEnv } from "./host-env.ts";
import { DEFAULT_IMAGE } from "./images.ts";
import { bwrapLauncher, enterArgv, parentPid, type SandboxProcesses } from "./namespaces.ts";
import { childPids, readChildPid, readReady, spawnDirect, stderrTail, withCgroups } from "./process.ts";
import { bwrapArgs, type SandboxPaths } from "./sandbox-args.ts";
import type { SpawnedChild, SpawnInput, SpawnUser, StdioSpec } from "./spawner.ts";

/** A sandbox's main process, started: its mounts are done and it is in its cgroups. */
export interface LaunchedSandbox {
  proc: SpawnedChild;
  /** Host pids of the sandbox's first process and of the bwrap holding it (zero unisolated). */
  processes: SandboxProcesses;
  /** Resolves with the egress relay once it listens (isolated, with egress); may still be starting. */
  relayUp: Promise<SpawnedChild> | undefined;
  /** The main process's fd 5 (isolated): it runs its command once told "go" on it. */
  go: Duplex | undefined;
  /** The latest of what bwrap writes to stderr, still collected while it runs. */
  stderr: Buffer[];
  gone: Promise<void>;
}

/**
 * Children are forked by the spawner helper: forking this process (with PGlite, all-in-one,
 * hundreds of MB resident) costs far more than the bwrap or relay it starts. This process
 * spawns them itself only when the helper cannot start.
 */
export async function spawnChild(
  ctx: DriverContext,
  argv: string[],
  env: Record<string, string>,
  options: { cwd?: string; stdio?: StdioSpec; user?: SpawnUser | undefined; input?: SpawnInput | undefined } = {},
): Promise<SpawnedChild> {
  const spawnOptions = {
    cwd: options.cwd,
    stdio: options.stdio ?? (["pipe", "pipe", "pipe"] as StdioSpec),
    user: options.user,
    input: options.input,
  };
  return (await ctx.spawner.spawnChild(argv, env, spawnOptions)) ?? spawnDirect(argv, env, spawnOptions);
}

/**
 * Starts a sandbox's main process (bwrap, or the command itself unisolated) with `env`, in
 * `cgroup`, and waits until its mounts are done and its processes are in the cgroup. The egress
 * relay is started meanwhile and is not waited for (`relayUp`). What a failed start made is
 * undone (its processes, egress proxy and cgroup) before it throws.
 */
export async function launchSandbox(
  ctx: DriverContext,
  spec: SandboxRuntimeSpec,
  workspace: string,
  env: Record<string, string>,
  cgroup: SandboxCgroup,
): Promise<LaunchedSandbox> {
  let main = spec.command && spec.command.length > 0 ? spec.command : ["sleep", "infinity"];
  // What bwrap (on the host) is started with; the rest is exported inside (host-env.ts).
  let launchEnv = env;
  let argv: string[];
  let user: SpawnUser | undefined;
  let bwrapOptions: Buffer | undefined;
  if (ctx.isolation === "none") {
    ctx.options.logger.warn({ sandboxId: spec.id }, "SANDBOX_LOCAL_ISOLATION=none: sandbox runs without isolation");
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
    const host: SandboxPaths = {
      workspace,
      runDir: join(ctx.options.dataDir, "run", spec.id),
      imageRoot: spec.image === DEFAULT_IMAGE ? undefined : ctx.images[spec.image],
    };
    const { seen, binds } = ctx.privateMounts?.plan(host) ?? { seen: host, binds: [] };
    // The binds are made as root: the user is switched to after them, by setpriv.
    const bwrap = bwrapLauncher(namespaceTools(ctx.tools), ctx.tools.bwrap as string, ctx.identity, {
      runnableByAnyone: ctx.bwrapForAnyone,
      viaSetpriv: binds.length > 0,
    });
    user = bwrap.user;
    // Its options reach bwrap on fd 6 (`--args`), not on its command line: the sandbox's pid 1 is
    // bwrap's own child, whose command line (/proc/1/cmdline, `ps`) every process inside reads,
    // and the options name the workspace's and run files' host paths.
    bwrapOptions = nulSeparated(bwrapArgs(spec, ctx.images, host, seen));
    argv = [...bwrap.argv, "--args", String(ARGS_FD), "--", ...signalReady];
    if (ctx.privateMounts) argv = ctx.privateMounts.wrap(binds, argv);
  }
  const egress = egressSockets(ctx);
  // The sandbox's proxy listens while bwrap builds the sandbox.
  const egressSocket = egress?.open(spec.id);
  egressSocket?.catch(() => {});
  stage("driver: args ready");
  const isolated = ctx.isolation !== "none";
  const stdio: StdioSpec = ["ignore", "ignore", "pipe", "pipe", "pipe", ...(isolated ? (["pipe"] as const) : [])];
  // Unisolated, the command joins the cgroups before it runs. bwrap's processes are moved in while
  // it builds the sandbox: the first move after a quiet spell waits ~10 ms for the kernel.
  const proc = await spawnChild(ctx, isolated ? argv : withCgroups(cgroup.procsFiles, argv), launchEnv, {
    cwd: ctx.isolation === "none" ? workspace : "/",
    stdio,
    user,
    // Written by whoever forks bwrap, right after the fork: bwrap reads them to the end before
    // anything else, so it must not wait for this process, busy deciding the start meanwhile.
    input: bwrapOptions && { fd: ARGS_FD, data: bwrapOptions },
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
      const holderJoined = proc.pid.then((p) => cgroup.move(p ? [p] : []));
      const bwrapJoined = Promise.all([holderJoined, childPid]).then(([, p]) => cgroup.move([p.pid]));
      bwrapJoined.catch(() => {});
      // The network namespace exists once bwrap names its child: the relay starts in it while
      // bwrap is still building the mounts, and may still be starting once they are done.
      relayUp = egress
        ? childPid.then(async (p) => {
            const socketPath = (await egressSocket) as string;
            const enterNet = enterArgv(namespaceTools(ctx.tools), p, "net", ctx.identity);
            // In the sandbox's cgroups: socat forks a child per connection the sandbox opens, and
            // those count against its process and memory limits, not the host's. Nothing connects
            // before the relay is up (the sandbox's command and execs wait for it), so it is moved
            // in once it runs (nsenter and setpriv exec in place: one process) rather than by a
            // shell of its own, one program fewer beside bwrap building the sandbox.
            let joined: Promise<void> | undefined;
            const relay = await startEgressRelay(
              async (a, e) => {
                const child = await spawnChild(ctx, a, e);
                joined = child.pid.then((pid) => {
                  if (pid) return cgroup.move([pid]);
                });
                joined.catch(() => {});
                return child;
              },
              relayTools(ctx.tools),
              enterNet,
              socketPath,
            );
            try {
              await joined;
            } catch (err) {
              relay.kill("SIGKILL");
              throw new Error(`egress relay could not join the sandbox's cgroups: ${(err as Error).message}`);
            }
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
        await cgroup.move(childPids(processes.pid));
        stage("driver: in cgroups");
      }
    }
    stage("driver: started");
  } catch (err) {
    await undoLaunch(ctx, spec.id, { proc, relayUp, gone }, () => cgroup.remove());
    throw new Error(`sandbox failed to start: ${stderrTail(stderr) || (err as Error).message}`);
  }
  return { proc, processes, relayUp, go, stderr, gone };
}

/** The fd bwrap reads its options from (after stderr, the info fd, "ready" and "go"). */
const ARGS_FD = 6;

/** Arguments as `bwrap --args` reads them: each ended by a NUL. */
function nulSeparated(args: string[]): Buffer {
  return Buffer.from(args.map((arg) => `${arg}\0`).join(""), "utf8");
}

/**
 * Undoes a launch: its egress relay (once it runs) and main process killed, its egress proxy
 * closed and its cgroups removed (`removeCgroup`), each waited for.
 */
export async function undoLaunch(
  ctx: DriverContext,
  sandboxId: string,
  launched: Pick<LaunchedSandbox, "proc" | "relayUp" | "gone">,
  removeCgroup: () => Promise<void>,
): Promise<void> {
  const relay = await launched.relayUp?.catch(() => undefined);
  relay?.kill("SIGKILL");
  launched.proc.kill("SIGKILL");
  await launched.gone;
  await egressSockets(ctx)?.close(sandboxId);
  await removeCgroup();
}
