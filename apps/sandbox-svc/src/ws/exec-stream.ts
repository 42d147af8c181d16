import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { INTERNAL_IDENTITY_HEADER, type Principal, REQUEST_ID_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { guardSocket, type InternalKeys, rejectUpgrade, verifyIdentity } from "@agentplane/service-kit";
import { type WebSocket, WebSocketServer } from "ws";
import type { ExecProcess } from "../driver/types.ts";
import { type Actor, checkAccess, type SandboxDeps } from "../services/context.ts";
import { auditCommand, requireRunning } from "../services/exec.ts";
import { enforce, execContext } from "../services/policy.ts";
import { getSandboxRow, touchActivity } from "../services/sandboxes.ts";

const EXEC_PATH = /^\/v1\/projects\/([^/]+)\/sandboxes\/([^/]+)\/exec\/?$/;
/** The same exec for Kubernetes clients (`/k8s`: namespace = project, pod = sandbox), and attach. */
const K8S_STREAM_PATH = /^\/k8s\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach)\/?$/;
/** A sandbox's main process has no terminal to share: attaching opens a login shell. */
const ATTACH_ARGV = ["/bin/sh", "-l"];
const PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
const RESIZE = 4;
const CLOSE = 255;
const HIGH_WATER = 8 * 1024 * 1024;

/** Kubernetes `Status` for channel 3: success, or the exit code as the NonZeroExitCode cause. */
export function exitStatus(exitCode: number): string {
  if (exitCode === 0) return JSON.stringify({ metadata: {}, status: "Success" });
  return JSON.stringify({
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: ${exitCode}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
  });
}

/** Open interactive streams per sandbox: they count as activity for the idle stop. */
export const openStreams = new Map<string, number>();

/**
 * Interactive exec over WebSocket with the Kubernetes streaming protocol (v4/v5 channel.k8s.io).
 * The gateway authenticated the caller and forwards the upgrade with the internal identity header.
 */
export function createExecUpgradeHandler(deps: SandboxDeps, keys: InternalKeys) {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (offered) => PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });

  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    guardSocket(socket);
    void (async () => {
      const url = new URL(req.url ?? "/", "http://sandbox");
      const match = EXEC_PATH.exec(url.pathname) ?? K8S_STREAM_PATH.exec(url.pathname);
      if (!match) throw new ProblemError("not-found", { detail: `No WebSocket endpoint at ${url.pathname}` });
      const [projectId, sandboxId] = [decodeURIComponent(match[1] as string), decodeURIComponent(match[2] as string)];
      const token = req.headers[INTERNAL_IDENTITY_HEADER];
      if (typeof token !== "string")
        throw new ProblemError("unauthenticated", { detail: "Authentication is required" });
      let principal: Principal;
      try {
        principal = (await verifyIdentity(keys, token, "sandbox")).principal;
      } catch {
        throw new ProblemError("unauthenticated", { detail: "Invalid internal identity" });
      }
      const { orgId } = await checkAccess(deps, principal, "sandboxes:exec", projectId);
      const requestId = req.headers[REQUEST_ID_HEADER];
      const actor: Actor = {
        principal,
        ...(orgId ? { orgId } : {}),
        ...(typeof requestId === "string" ? { requestId } : {}),
      };
      const row = await getSandboxRow(deps, projectId, sandboxId);
      requireRunning(row);
      const argv = match[3] === "attach" ? ATTACH_ARGV : url.searchParams.getAll("command");
      if (argv.length === 0 || argv[0] === "") {
        throw new ProblemError("validation-failed", {
          detail: "The command is empty",
          errors: [{ pointer: "/query/command", message: "at least one command argument is required" }],
        });
      }
      const tty = ["true", "1"].includes(url.searchParams.get("tty") ?? "");
      const cols = Number(url.searchParams.get("cols") ?? 80) || 80;
      const rows = Number(url.searchParams.get("rows") ?? 24) || 24;
      await enforce(deps, actor, "sandbox:exec", row, execContext(argv, tty), `Exec in sandbox ${sandboxId}`);
      if (socket.destroyed) return;
      const proc = await deps.driver.exec(sandboxId, { argv, tty, cols, rows });
      // The client may have reset the connection while the process started: it would never be reaped.
      if (socket.destroyed) {
        proc.kill("SIGKILL");
        return;
      }
      await touchActivity(deps, sandboxId);
      let upgraded = false;
      socket.once("close", () => {
        if (!upgraded) proc.kill("SIGKILL");
      });
      wss.handleUpgrade(req, socket, head, (ws) => {
        upgraded = true;
        const started = performance.now();
        openStreams.set(sandboxId, (openStreams.get(sandboxId) ?? 0) + 1);
        void serveStream(ws, proc).then(async (exitCode) => {
          openStreams.set(sandboxId, (openStreams.get(sandboxId) ?? 1) - 1);
          await touchActivity(deps, sandboxId).catch(() => {});
          await auditCommand(deps, actor, row, "sandbox.exec_stream", {
            command: argv,
            exitCode,
            durationMs: Math.round(performance.now() - started),
          });
        });
      });
    })().catch((err) => {
      const problem = err instanceof ProblemError ? err : new ProblemError("internal-error", { detail: "Exec failed" });
      if (!(err instanceof ProblemError)) deps.logger.error({ err }, "exec upgrade failed");
      rejectUpgrade(socket, problem);
    });
  };
}

function frame(channel: number, data: Buffer | string): Buffer {
  const payload = typeof data === "string" ? Buffer.from(data) : data;
  const out = Buffer.allocUnsafe(payload.length + 1);
  out[0] = channel;
  payload.copy(out, 1);
  return out;
}

/** Relays one process over the socket; resolves with its exit code once the status was sent. */
export function serveStream(ws: WebSocket, proc: ExecProcess): Promise<number> {
  const v5 = ws.protocol === "v5.channel.k8s.io";
  const relay = (stream: NodeJS.ReadableStream & { pause(): void; resume(): void }, channel: number) => {
    const ended = new Promise<void>((resolve) => {
      stream.once("end", resolve);
      stream.once("close", resolve);
    });
    stream.on("data", (chunk: Buffer) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(frame(channel, chunk), () => {
        if (ws.bufferedAmount < HIGH_WATER / 4) stream.resume();
      });
      // Backpressure: a slow client pauses the process instead of filling our memory.
      if (ws.bufferedAmount > HIGH_WATER) stream.pause();
    });
    return ended;
  };
  const outputs = Promise.all([relay(proc.stdout, STDOUT), relay(proc.stderr, STDERR)]);

  ws.on("message", (data: Buffer, isBinary: boolean) => {
    const buf = isBinary ? data : Buffer.from(data);
    if (buf.length === 0) return;
    const channel = buf[0];
    const payload = buf.subarray(1);
    if (channel === STDIN) {
      if (payload.length > 0 && proc.stdin.writable) proc.stdin.write(payload);
    } else if (channel === RESIZE) {
      try {
        const size = JSON.parse(payload.toString("utf8")) as { Width?: number; Height?: number };
        if (size.Width && size.Height) proc.resize(size.Width, size.Height);
      } catch {
        // A malformed resize is ignored, as kubelet does.
      }
    } else if (channel === CLOSE && v5 && payload[0] === STDIN) {
      proc.stdin.end();
    }
  });
  ws.on("close", () => proc.kill("SIGKILL"));
  ws.on("error", () => proc.kill("SIGKILL"));

  return (async () => {
    const { exitCode } = await proc.exited;
    await Promise.race([outputs, new Promise((r) => setTimeout(r, 200))]);
    if (ws.readyState === ws.OPEN) {
      ws.send(frame(STATUS, exitStatus(exitCode)));
      ws.close(1000);
    }
    return exitCode;
  })();
}

/** The server class streams are served with, for callers outside this package (benchmarks). */
export { WebSocketServer } from "ws";
