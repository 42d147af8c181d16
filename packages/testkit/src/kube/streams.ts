import { spawn } from "node:child_process";
import { connect } from "node:net";
import type { WebSocket } from "ws";
import type { FakeKubelet } from "./kubelet.ts";

/** Channels of the Kubernetes streaming protocol (`*.channel.k8s.io`). */
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
const RESIZE = 4;
const CLOSE = 255;

function frame(channel: number, data: Buffer | string): Buffer {
  const body = typeof data === "string" ? Buffer.from(data) : data;
  return Buffer.concat([Buffer.from([channel]), body]);
}

function exitStatus(argv: string[], exitCode: number | null, error?: string): string {
  if (error) return JSON.stringify({ metadata: {}, status: "Failure", message: error, reason: "InternalError" });
  if (exitCode === 0) return JSON.stringify({ metadata: {}, status: "Success" });
  return JSON.stringify({
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: error executing command [${argv.join(" ")}], exit code ${exitCode}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
  });
}

interface ExecQuery {
  argv: string[];
  stdin: boolean;
  tty: boolean;
}

/**
 * `pods/exec`: runs the command in the Pod's "container" (its environment and working directory).
 * v5 honours the client's stdin close (channel 255); under v4 a client ends stdin by closing the
 * connection, which ends the command. With a TTY the process gets a pseudo-terminal and resize
 * frames (channel 4, `{"Width":…,"Height":…}`) change its size. The exit status arrives on channel 3.
 */
export async function serveExec(
  ws: WebSocket,
  container: NonNullable<ReturnType<FakeKubelet["container"]>>,
  query: ExecQuery,
): Promise<void> {
  const v5 = ws.protocol === "v5.channel.k8s.io";
  const send = (channel: number, data: Buffer | string) => {
    if (ws.readyState === ws.OPEN) ws.send(frame(channel, data));
  };
  const finish = (exitCode: number | null, error?: string) => {
    send(STATUS, exitStatus(query.argv, exitCode, error));
    ws.close(1000);
  };
  const env = { ...container.env, ...(query.tty ? { TERM: "xterm-256color" } : {}) };
  if (query.tty) {
    // Frames may arrive while node-pty loads: keep them for the terminal.
    const early: Buffer[] = [];
    let sized: () => void = () => {};
    const firstSize = new Promise<void>((resolve) => {
      sized = resolve;
    });
    const collectEarly = (data: Buffer) => {
      early.push(data);
      if (data[0] === RESIZE) sized();
    };
    ws.on("message", collectEarly);
    const pty = await import("node-pty");
    // Clients send the terminal's size first thing; start the command at that size (waiting a
    // moment for it), so its first `stty size` does not depend on which arrives first.
    await Promise.race([firstSize, new Promise((resolve) => setTimeout(resolve, 1000))]);
    const initial = early.filter((d) => d[0] === RESIZE).at(-1);
    const size = initial ? (JSON.parse(initial.subarray(1).toString("utf8")) as Record<string, number>) : {};
    let term: import("node-pty").IPty;
    try {
      term = pty.spawn(query.argv[0] as string, query.argv.slice(1), {
        cwd: container.cwd,
        env,
        cols: size.Width ?? size.width ?? 80,
        rows: size.Height ?? size.height ?? 24,
      });
    } catch (err) {
      finish(null, (err as Error).message);
      return;
    }
    const stop = () => term.kill("SIGKILL");
    container.streams.add(stop);
    term.onData((data) => send(STDOUT, data));
    term.onExit(({ exitCode }) => {
      container.streams.delete(stop);
      // node-pty reports the exit before the last output has been read.
      setTimeout(() => finish(exitCode), 20);
    });
    const onFrame = (data: Buffer) => {
      const channel = data[0];
      const body = data.subarray(1);
      if (channel === STDIN) term.write(body.toString("utf8"));
      else if (channel === RESIZE) {
        const size = JSON.parse(body.toString("utf8")) as Record<string, number>;
        term.resize(size.Width ?? size.width ?? 80, size.Height ?? size.height ?? 24);
      }
    };
    ws.off("message", collectEarly);
    for (const data of early) onFrame(data);
    ws.on("message", onFrame);
    ws.on("close", stop);
    return;
  }
  const child = spawn(query.argv[0] as string, query.argv.slice(1), {
    cwd: container.cwd,
    env,
    stdio: [query.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    detached: true,
  });
  const stop = () => {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
  };
  container.streams.add(stop);
  child.stdout?.on("data", (chunk: Buffer) => send(STDOUT, chunk));
  child.stderr?.on("data", (chunk: Buffer) => send(STDERR, chunk));
  child.stdin?.on("error", () => {});
  let failed: string | undefined;
  child.once("error", (err) => {
    failed = `failed to exec in container: exec: "${query.argv[0]}": ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "executable file not found in $PATH" : err.message}`;
  });
  child.once("close", (code, signal) => {
    container.streams.delete(stop);
    finish(failed ? null : (code ?? 128 + (signal === "SIGKILL" ? 9 : 15)), failed);
  });
  ws.on("message", (data: Buffer) => {
    const channel = data[0];
    if (channel === STDIN) child.stdin?.write(data.subarray(1));
    else if (channel === CLOSE && v5 && data[1] === STDIN) child.stdin?.end();
  });
  ws.on("close", stop);
}

/**
 * `pods/portforward` (WebSocket, v4): one data and one error channel per port, each opened by the
 * port number (2 bytes, little endian); data is relayed to the port on the Pod's IP (here loopback).
 */
export function servePortForward(
  ws: WebSocket,
  container: NonNullable<ReturnType<FakeKubelet["container"]>>,
  port: number,
): void {
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16LE(port);
  ws.send(frame(0, portBytes));
  ws.send(frame(1, portBytes));
  const socket = connect(port, "127.0.0.1");
  const stop = () => socket.destroy();
  container.streams.add(stop);
  socket.on("data", (chunk) => {
    if (ws.readyState === ws.OPEN) ws.send(frame(0, chunk));
  });
  socket.on("error", (err) => {
    if (ws.readyState === ws.OPEN) ws.send(frame(1, `error forwarding port ${port} to pod: ${err.message}`));
  });
  socket.on("close", () => {
    container.streams.delete(stop);
    ws.close(1000);
  });
  ws.on("message", (data: Buffer) => {
    if (data[0] === 0) socket.write(data.subarray(1));
  });
  ws.on("close", () => socket.end());
}
