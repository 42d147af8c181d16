import { join } from "node:path";
import { Duplex, type Readable } from "node:stream";
import type { ExecOptions, ExecProcess } from "../types.ts";
import { type DriverContext, namespaceTools, type RunningSandbox } from "./driver-context.ts";
import { execFailurePrefix, withShellExecErrors } from "./exec-errors.ts";
import { splitSandboxEnv } from "./host-env.ts";
import { enterArgv } from "./namespaces.ts";
import { spawnPiped, spawnTty, withCgroups } from "./process.ts";
import { SANDBOX_PATH, withSandboxTerminal } from "./sandbox-args.ts";

/** Relays stdio to a TCP port; run with the host's node inside the sandbox's network namespace when socat is absent. */
const NODE_RELAY =
  "const s=require('net').connect(+process.argv[1],'127.0.0.1');s.on('error',()=>process.exit(1));process.stdin.pipe(s).pipe(process.stdout);";

/** Runs a command in every namespace and the cgroups of a running sandbox (as is, unisolated). */
export async function spawnExec(
  ctx: DriverContext,
  running: RunningSandbox,
  options: ExecOptions,
): Promise<ExecProcess> {
  let env = { ...running.env, ...(options.tty ? { TERM: "xterm-256color" } : {}), ...options.env };
  let argv: string[];
  let cwd: string | undefined;
  let exportsInside = false;
  if (ctx.isolation === "none") {
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
    const nsenter = enterArgv(namespaceTools(ctx.tools), running.processes, "all", ctx.identity);
    argv = withCgroups(running.cgroup.procsFiles, [...nsenter, "--", ...inner]);
  }
  let proc = options.tty
    ? await spawnTty(argv, env, { cols: options.cols ?? 80, rows: options.rows ?? 24 }, cwd)
    : ((await ctx.spawner.spawn(argv, env, cwd)) ?? spawnPiped(argv, env, cwd));
  // nsenter executes the command: one the sandbox lacks is told as a shell tells it, not by nsenter.
  if (ctx.isolation !== "none" && !options.tty) {
    const program = options.argv[0] as string;
    proc = withShellExecErrors(proc, program, execFailurePrefix(program, options.cwd, exportsInside));
  }
  return proc;
}

/**
 * A byte stream to `port` inside a running sandbox: a relay (socat, else the host's node) in its
 * network namespace. The relay process is returned too, so the caller can track and kill it.
 */
export async function spawnPortRelay(
  ctx: DriverContext,
  running: RunningSandbox,
  port: number,
): Promise<{ duplex: Duplex; proc: ExecProcess }> {
  const relay = ctx.tools.socat
    ? [ctx.tools.socat, "-", `TCP:127.0.0.1:${port}`]
    : [process.execPath, "-e", NODE_RELAY, String(port)];
  const relayArgv = [...enterArgv(namespaceTools(ctx.tools), running.processes, "net", ctx.identity), "--", ...relay];
  const relayEnv = { PATH: SANDBOX_PATH };
  const proc = (await ctx.spawner.spawn(relayArgv, relayEnv)) ?? spawnPiped(relayArgv, relayEnv);
  const duplex = Duplex.from({ readable: proc.stdout as Readable, writable: proc.stdin });
  duplex.on("close", () => proc.kill());
  // The relay exits when nothing listens on the port ("premature close"); callers see the close,
  // and an error without a listener must not take the service down.
  duplex.on("error", () => {});
  return { duplex, proc };
}
