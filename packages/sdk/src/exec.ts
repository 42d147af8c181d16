// Interactive exec in a sandbox over the exec WebSocket (Kubernetes streaming protocol,
// v5.channel.k8s.io preferred, v4 as the fallback). Written against the standard WebSocket API so
// it runs in browsers and in Node 24 as is; a Node caller may pass the `ws` package's WebSocket to
// read the problem answer of a refused upgrade (a stopped sandbox's 409), which browsers hide.
import { RequestTimeoutError } from "./guard.ts";
import { ProblemError } from "./problem.ts";

export const EXEC_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"] as const;
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
const RESIZE = 4;
const CLOSE = 255;

/** The slice of the WebSocket API used here (the browser's, Node's global, or the `ws` package's). */
export interface WebSocketLike {
  binaryType: string;
  readonly protocol: string;
  readonly readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: { data?: unknown; code?: number }) => void): void;
}
export type WebSocketConstructor = new (url: string, protocols: string[]) => WebSocketLike;

export interface ExecStreamOptions {
  /** The installation's address (http or https; the socket uses ws or wss). */
  baseUrl: string;
  /** Sent as the `base64url.bearer.authorization.k8s.io.<token>` subprotocol (browsers cannot set headers). */
  token?: string;
  projectId: string;
  sandboxId: string;
  /** An argv array, or a string run with `sh -c` (ignored by `k8s-attach`). */
  command: string[] | string;
  /** The endpoint: `/v1/…/exec` (default), or the Kubernetes-compatible pod `exec` or `attach`. */
  endpoint?: "exec" | "k8s-exec" | "k8s-attach";
  tty?: boolean;
  cols?: number;
  rows?: number;
  /** Defaults to `globalThis.WebSocket`. */
  WebSocket?: WebSocketConstructor;
  /**
   * The longest the socket may take to open; past it, openExecStream rejects with
   * RequestTimeoutError. Unset or 0: no deadline (the command itself may run as long as it runs).
   */
  timeoutMs?: number;
}

/** What is read of a refused upgrade's answer at most: a problem is short. */
const MAX_REFUSAL_BYTES = 64 * 1024;

export interface ExecExit {
  exitCode: number;
  /** The Kubernetes `Status` object of the status channel. */
  status: { status?: string; message?: string; reason?: string } | undefined;
}

/** The connection went away before the status channel reported an exit. */
export class ExecConnectionLost extends Error {
  readonly code: number | undefined;
  constructor(code: number | undefined) {
    super(`the exec connection was lost${code ? ` (close code ${code})` : ""}`);
    this.name = "ExecConnectionLost";
    this.code = code;
  }
}

export interface ExecStream {
  /** The protocol the server chose. */
  readonly protocol: string;
  onStdout(listener: (chunk: Uint8Array) => void): void;
  onStderr(listener: (chunk: Uint8Array) => void): void;
  write(data: Uint8Array | string): void;
  /** Half-closes stdin (v5 only; with v4 the process sees end of input when the socket closes). */
  end(): void;
  resize(cols: number, rows: number): void;
  close(): void;
  /** Resolves with the remote exit code; rejects with ExecConnectionLost. */
  readonly exited: Promise<ExecExit>;
}

const encoder = new TextEncoder();

function frame(channel: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(payload.length + 1);
  out[0] = channel;
  out.set(payload, 1);
  return out;
}

function base64url(text: string): string {
  let binary = "";
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The exit code a Kubernetes `Status` carries: 0 on Success, the ExitCode cause on Failure. */
export function exitCodeOf(status: Record<string, unknown> | undefined): number {
  if (!status || status.status === "Success") return 0;
  const causes = (status.details as { causes?: { reason?: string; message?: string }[] } | undefined)?.causes ?? [];
  const code = Number(causes.find((c) => c.reason === "ExitCode")?.message);
  return Number.isInteger(code) ? code : 1;
}

export function execUrl(options: ExecStreamOptions): string {
  const [project, sandbox] = [encodeURIComponent(options.projectId), encodeURIComponent(options.sandboxId)];
  const path =
    options.endpoint === "k8s-exec" || options.endpoint === "k8s-attach"
      ? `/k8s/api/v1/namespaces/${project}/pods/${sandbox}/${options.endpoint.slice(4)}`
      : `/v1/projects/${project}/sandboxes/${sandbox}/exec`;
  const url = new URL(`${options.baseUrl.replace(/\/+$/, "")}${path}`);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const argv = typeof options.command === "string" ? ["sh", "-c", options.command] : options.command;
  if (options.endpoint !== "k8s-attach") for (const arg of argv) url.searchParams.append("command", arg);
  if (options.tty) url.searchParams.set("tty", "true");
  if (options.cols) url.searchParams.set("cols", String(options.cols));
  if (options.rows) url.searchParams.set("rows", String(options.rows));
  return url.toString();
}

/** An output channel: chunks emitted before the first listener are held and handed to it. */
function channel() {
  const listeners: ((chunk: Uint8Array) => void)[] = [];
  let held: Uint8Array[] = [];
  return {
    emit(chunk: Uint8Array) {
      if (listeners.length === 0) held.push(chunk.slice());
      for (const fn of listeners) fn(chunk);
    },
    listen(fn: (chunk: Uint8Array) => void) {
      listeners.push(fn);
      const early = held;
      held = [];
      for (const chunk of early) fn(chunk);
    },
  };
}

/** Opens the exec socket; rejects with ProblemError when refused (with `ws`) or a plain Error. */
export function openExecStream(options: ExecStreamOptions): Promise<ExecStream> {
  const Ctor = options.WebSocket ?? (globalThis.WebSocket as unknown as WebSocketConstructor | undefined);
  if (!Ctor) throw new Error("no WebSocket implementation: pass one as options.WebSocket");
  const protocols: string[] = [...EXEC_PROTOCOLS];
  if (options.token) protocols.push(`base64url.bearer.authorization.k8s.io.${base64url(options.token)}`);
  const ws = new Ctor(execUrl(options), protocols);
  ws.binaryType = "arraybuffer";

  // Frames can arrive in the same tick as `open` (a quick command's whole output may come with the
  // upgrade answer), before the caller could subscribe: a channel keeps its chunks until it can.
  const stdout = channel();
  const stderr = channel();
  let status: Record<string, unknown> | undefined;
  let opened = false;
  let settleExit: { resolve(e: ExecExit): void; reject(e: Error): void } | undefined;
  const exited = new Promise<ExecExit>((resolve, reject) => {
    settleExit = { resolve, reject };
  });
  exited.catch(() => {});

  return new Promise<ExecStream>((resolve, reject) => {
    // A server that takes the connection and never answers the upgrade would hold us forever.
    let timedOut = false;
    const deadline = options.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          ws.close();
        }, options.timeoutMs)
      : undefined;
    // The `ws` package reports a refused upgrade with its HTTP answer: read the problem from it.
    const nodeSocket = ws as unknown as {
      on?(event: string, fn: (req: unknown, res: ResponseLike) => void): void;
    };
    type ResponseLike = {
      statusCode?: number;
      headers: Record<string, string | string[] | undefined>;
      on(event: string, fn: (chunk?: Uint8Array) => void): void;
    };
    nodeSocket.on?.("unexpected-response", (_req, res) => {
      // Answered: no close follows this one (`ws` leaves it to us), so the deadline ends here.
      clearTimeout(deadline);
      const chunks: Uint8Array[] = [];
      let size = 0;
      res.on("data", (c) => {
        if (!c || size >= MAX_REFUSAL_BYTES) return;
        chunks.push(c);
        size += c.byteLength;
      });
      res.on("end", () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
        const decoder = new TextDecoder();
        const text = chunks.map((c) => decoder.decode(c, { stream: true })).join("") + decoder.decode();
        const response = new Response(text, { status: res.statusCode ?? 500, headers });
        void ProblemError.fromResponse(response).then(reject, reject);
      });
    });

    ws.addEventListener("open", () => {
      clearTimeout(deadline);
      opened = true;
      const send = (channel: number, data: Uint8Array | string) => {
        if (ws.readyState === 1) ws.send(frame(channel, typeof data === "string" ? encoder.encode(data) : data));
      };
      resolve({
        protocol: ws.protocol,
        onStdout: stdout.listen,
        onStderr: stderr.listen,
        write: (data) => send(STDIN, data),
        end: () => {
          if (ws.protocol === "v5.channel.k8s.io") send(CLOSE, new Uint8Array([STDIN]));
        },
        resize: (cols, rows) => send(RESIZE, JSON.stringify({ Width: cols, Height: rows })),
        close: () => ws.close(1000),
        exited,
      });
    });
    ws.addEventListener("message", (event) => {
      const data = event.data;
      const bytes =
        data instanceof ArrayBuffer
          ? new Uint8Array(data)
          : ArrayBuffer.isView(data)
            ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
            : encoder.encode(String(data));
      if (bytes.length === 0) return;
      const payload = bytes.subarray(1);
      if (bytes[0] === STDOUT) stdout.emit(payload);
      else if (bytes[0] === STDERR) stderr.emit(payload);
      else if (bytes[0] === STATUS) {
        try {
          status = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
        } catch {
          status = { status: "Failure", message: "unreadable status" };
        }
      }
    });
    ws.addEventListener("close", (event) => {
      clearTimeout(deadline);
      if (!opened) {
        if (timedOut) return reject(new RequestTimeoutError(options.timeoutMs!));
        reject(new Error(`the exec connection was refused${event.code ? ` (close code ${event.code})` : ""}`));
        return;
      }
      if (status) settleExit?.resolve({ exitCode: exitCodeOf(status), status: status as ExecExit["status"] });
      else settleExit?.reject(new ExecConnectionLost(event.code));
    });
    // An error is always followed by close, which settles; this only keeps it from being unhandled.
    ws.addEventListener("error", () => {});
  });
}
