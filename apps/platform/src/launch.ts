// Runs one deployable target in this process, or several as child processes of this launcher.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { DatabaseUnavailableError } from "@agentplane/db";
import { ConfigError } from "@agentplane/service-kit";
import { DataDirInUseError } from "./data-dir.ts";

/**
 * The one-line reason a target could not start, or undefined for an unexpected error (whose stack
 * the operator then needs). Start-up failures an operator can fix are told as what to do.
 */
export function describeStartupError(err: unknown): string | undefined {
  if (err instanceof ConfigError) return err.message;
  if (err instanceof DatabaseUnavailableError) return err.message;
  if (err instanceof DataDirInUseError) return err.message;
  const e = err as NodeJS.ErrnoException & { port?: number; address?: string };
  if (e?.code === "EADDRINUSE") {
    const where = e.port !== undefined ? `port ${e.port}` : "the port";
    return `${where} is already in use: stop what listens there or set PORT to a free port`;
  }
  if (e?.code === "EACCES" && e.port !== undefined) {
    return `not allowed to listen on port ${e.port}: use a port above 1023 or run with the needed privilege`;
  }
  return undefined;
}

/** Imports a target's main module; a failure an operator can fix is one line and exit code 1. */
export async function runTarget(name: string, modulePath: string): Promise<void> {
  try {
    await import(modulePath);
  } catch (err) {
    const line = describeStartupError(err);
    if (!line) throw err;
    process.stderr.write(`agentplane ${name}: ${line}\n`);
    process.exit(1);
  }
}

/** The variable that says where each service listens; a listed service takes its port from it. */
const URL_VARIABLES: Record<string, string> = {
  tenancy: "TENANCY_URL",
  sandbox: "SANDBOX_URL",
  audit: "AUDIT_URL",
  governance: "GOVERNANCE_URL",
  connections: "CONNECTIONS_URL",
  inference: "INFERENCE_URL",
};

/** The environment of one listed target: its port from its URL variable, else its own default. */
export function childEnv(name: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  const urlVar = URL_VARIABLES[name];
  if (!urlVar) return out; // the gateway and the runtime keep PORT
  delete out.PORT;
  const url = env[urlVar];
  if (url) {
    const port = new URL(url).port;
    if (port) out.PORT = port;
  }
  return out;
}

/**
 * `--target=a,b,c`: each target in its own child process (its own event loop and memory, as in
 * production), output prefixed with its name. When one stops, the others are stopped and the
 * launcher exits with its code, so a supervisor sees the failure.
 */
export async function runTargetList(names: string[], mainPath = fileURLToPath(import.meta.resolve("./main.ts"))) {
  const children = new Map<string, ChildProcess>();
  let exiting = false;
  const running = () => [...children.values()].filter((c) => c.exitCode === null && c.signalCode === null);
  const stopAll = (signal: NodeJS.Signals) => {
    for (const child of running()) child.kill(signal);
  };
  const allExited = () => Promise.all(running().map((c) => new Promise((r) => c.once("exit", r))));
  for (const name of names) {
    const child = spawn(process.execPath, [mainPath, `--target=${name}`], {
      env: childEnv(name, process.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.set(name, child);
    for (const [stream, out] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ] as const) {
      createInterface({ input: stream }).on("line", (line) => out.write(`[${name}] ${line}\n`));
    }
    child.on("exit", (code, signal) => {
      if (exiting) return;
      exiting = true;
      process.stderr.write(`agentplane: ${name} stopped (${signal ?? `exit ${code}`}); stopping the others\n`);
      stopAll("SIGTERM");
      const force = setTimeout(() => stopAll("SIGKILL"), 10_000);
      force.unref();
      void allExited().then(() => process.exit(code ?? 1));
    });
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      exiting = true;
      stopAll(signal);
      void allExited().then(() => process.exit(0));
    });
  }
}
