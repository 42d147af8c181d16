import { connect } from "node:net";
import { Duplex, PassThrough, Readable } from "node:stream";
import { ProblemError } from "@agentplane/problem-details";
import { Exec, type KubeConfig, PortForward, type V1Status } from "@kubernetes/client-node";
// Not re-exported by the package root; constructed here so a server's close frames (v5) end our
// streams and never the service's own stdout (the handler's default).
import { type StreamInterface, WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js";
import { WebSocket } from "ws";
import type { ExecExit, ExecOptions, ExecProcess } from "../types.ts";
import { DEFAULT_API_TIMEOUT_MS } from "./api-errors.ts";
import { CONTAINER } from "./objects.ts";

/** Frame that closes the sender's stdin under v5.channel.k8s.io (channel 255, then the stream). */
const CLOSE_STDIN = Buffer.from([255, 0]);

/** `sh` quoting-free wrapper: the working directory and environment a Kubernetes exec has no field for. */
export function execArgv(options: ExecOptions): string[] {
  const env = Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`);
  const command = [...(env.length > 0 ? ["env", ...env] : []), ...options.argv];
  return options.cwd ? ["/bin/sh", "-c", 'cd -- "$0" && exec "$@"', options.cwd, ...command] : command;
}

/**
 * The client's WebSocket handler with the opening handshake bounded: an API server that takes the
 * connection and never answers the upgrade would otherwise hold the exec (and its command slot) for good.
 */
function boundedHandler(kc: KubeConfig, timeoutMs: number, streams?: StreamInterface): WebSocketHandler {
  return new WebSocketHandler(
    kc,
    (uri, protocols, opts) => new WebSocket(uri, protocols, { ...opts, handshakeTimeout: timeoutMs }),
    streams,
  );
}

/** A `pods/exec` or `pods/portforward` that could not be opened: 504 at the deadline, else 502 naming the answer. */
function dialFailure(what: string, err: unknown, timeoutMs: number): ProblemError {
  const message = (err as { message?: unknown })?.message;
  const text = typeof message === "string" && message ? message : String(err);
  if (/handshake has timed out/i.test(text)) {
    return new ProblemError("gateway-timeout", {
      detail: `The Kubernetes API server did not answer within ${Math.round(timeoutMs / 1000)} s (${what})`,
    });
  }
  return new ProblemError("bad-gateway", { detail: `The Kubernetes API server could not open ${what}: ${text}` });
}

function exitOf(status: V1Status): ExecExit & { message?: string } {
  if (status.status === "Success") return { exitCode: 0 };
  const code = status.details?.causes?.find((c) => c.reason === "ExitCode")?.message;
  if (code !== undefined) return { exitCode: Number(code) };
  // The command could not be started (not found, not executable): the shell's convention.
  return { exitCode: 126, ...(status.message ? { message: status.message } : {}) };
}

/**
 * A process inside the sandbox through `pods/exec` (WebSocket, `v5.channel.k8s.io` or v4). Under
 * v5 ending stdin sends the close frame and the command sees EOF; v4 has no such frame, so stdin is
 * only ended by closing the connection, which would end the command too: there, the end of stdin is
 * not passed on. Resize (TTY) travels on channel 4, the exit status on channel 3. `kill` closes the
 * connection; the kubelet then closes the command's streams.
 */
export async function podExec(
  kc: KubeConfig,
  namespace: string,
  pod: string,
  options: ExecOptions,
  container = CONTAINER,
  timeoutMs = DEFAULT_API_TIMEOUT_MS,
): Promise<ExecProcess> {
  const tty = options.tty === true;
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  // Never ended: our own frames below carry stdin, so the client's handler only learns there is one.
  const wire = new Readable({ read() {} });
  const size = stdout as PassThrough & { columns?: number; rows?: number };
  if (tty) {
    size.columns = options.cols ?? 80;
    size.rows = options.rows ?? 24;
  }
  let status: V1Status | undefined;
  let killed = false;
  const handler = boundedHandler(kc, timeoutMs, { stdin: wire, stdout, stderr });
  const ws = await new Exec(kc, handler)
    .exec(namespace, pod, container, execArgv(options), stdout, tty ? null : stderr, wire, tty, (s) => {
      status = s;
    })
    .catch((err: unknown) => {
      throw dialFailure(`exec in Pod ${pod}`, err, timeoutMs);
    });
  if (tty) stderr.end();
  const v5 = WebSocketHandler.supportsClose(ws.protocol);
  stdin.on("data", (chunk: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([WebSocketHandler.StdinStream]), chunk]));
  });
  stdin.on("end", () => {
    if (v5 && ws.readyState === ws.OPEN) ws.send(CLOSE_STDIN);
  });
  const exited = new Promise<ExecExit>((resolve) => {
    ws.on("close", () => {
      if (!stdout.writableEnded) stdout.end();
      if (!stderr.writableEnded) stderr.end();
      if (status) {
        // The client has ended stderr by now: a start failure's message is not passed on, its code is.
        const { message: _message, ...exit } = exitOf(status);
        resolve(exit);
      } else resolve(killed ? { exitCode: 137, signal: "SIGKILL" } : { exitCode: 255 });
    });
  });
  return {
    stdin,
    stdout,
    stderr,
    exited,
    resize(cols, rows) {
      if (!tty) return;
      size.columns = cols;
      size.rows = rows;
      stdout.emit("resize");
    },
    kill() {
      killed = true;
      ws.close();
    },
  };
}

/**
 * A byte stream to a port of the Pod: straight to its IP when this process runs in the cluster
 * (the NetworkPolicy lets sandbox-svc in), else through `pods/portforward`.
 */
export async function podPortForward(
  kc: KubeConfig,
  namespace: string,
  pod: string,
  port: number,
  podIP: string | undefined,
  timeoutMs = DEFAULT_API_TIMEOUT_MS,
): Promise<Duplex> {
  if (podIP) {
    const socket = connect(port, podIP);
    socket.on("error", () => {});
    return socket;
  }
  const output = new PassThrough();
  const input = new PassThrough();
  const errors = new PassThrough();
  const ws = (await new PortForward(kc, true, boundedHandler(kc, timeoutMs))
    .portForward(namespace, pod, [port], output, errors, input)
    .catch((err: unknown) => {
      throw dialFailure(`port ${port} of Pod ${pod}`, err, timeoutMs);
    })) as {
    on(event: "close", cb: () => void): void;
    close(): void;
  };
  const duplex = Duplex.from({ readable: output, writable: input });
  errors.on("data", () => duplex.destroy());
  ws.on("close", () => output.end());
  duplex.on("close", () => ws.close());
  duplex.on("error", () => {});
  return duplex;
}
