import type { WebSocket } from "ws";
import type { ExecProcess } from "../../driver/types.ts";
import { outputEnded } from "../../exec/run-command.ts";

/**
 * The Kubernetes streaming protocol (v4/v5 channel.k8s.io) over one WebSocket: channel 0 stdin,
 * 1 stdout, 2 stderr, 3 the exit status, 4 terminal resizes, 255 (v5) closes stdin.
 */

/** The protocols spoken, preferred first. */
export const STREAM_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
const RESIZE = 4;
const CLOSE = 255;
const HIGH_WATER = 8 * 1024 * 1024;
/** How often a stream whose reading waits on stdin checks that its client is still there. */
const PAUSED_PING_MS = 2_000;

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

function frame(channel: number, data: Buffer | string): Buffer {
  const payload = typeof data === "string" ? Buffer.from(data) : data;
  const out = Buffer.allocUnsafe(payload.length + 1);
  out[0] = channel;
  payload.copy(out, 1);
  return out;
}

/** How a stream ended: the process's exit code, and whether its client closed it first (killed). */
export interface StreamEnd {
  exitCode: number;
  closedByClient: boolean;
}

/** Relays one process over the socket; resolves once the status was sent (or the client left). */
export function serveStream(ws: WebSocket, proc: ExecProcess): Promise<StreamEnd> {
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

  // Backpressure the other way: stdin the process does not take yet stops our reading of the
  // socket (the client then waits) instead of piling up here. A socket not read cannot see its
  // client leave: a ping now and then can (writing to a closed connection fails).
  let stdinFull = false;
  let exited = false;
  let probe: NodeJS.Timeout | undefined;
  const stdinDrained = () => {
    if (!stdinFull) return;
    stdinFull = false;
    clearInterval(probe);
    ws.resume();
  };
  proc.stdin.on("drain", stdinDrained);
  proc.stdin.once("close", stdinDrained);
  proc.stdin.on("error", stdinDrained);
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    const buf = isBinary ? data : Buffer.from(data);
    if (buf.length === 0) return;
    const channel = buf[0];
    const payload = buf.subarray(1);
    if (channel === STDIN) {
      if (exited || payload.length === 0 || !proc.stdin.writable) return;
      if (!proc.stdin.write(payload) && !stdinFull) {
        stdinFull = true;
        ws.pause();
        probe = setInterval(() => ws.ping(), PAUSED_PING_MS);
      }
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
  let closedByClient = false;
  const clientGone = () => {
    clearInterval(probe);
    closedByClient = true;
    proc.kill("SIGKILL");
  };
  ws.on("close", clientGone);
  ws.on("error", clientGone);

  return (async () => {
    const exit = await proc.exited;
    exited = true;
    // What stdin still waits goes nowhere now; the socket is read again for the close handshake.
    stdinDrained();
    const { exitCode } = exit;
    // Whether the client had gone before the process ended (our close below comes after).
    const gone = closedByClient;
    await outputEnded(exit, outputs, 200);
    if (ws.readyState === ws.OPEN) {
      ws.send(frame(STATUS, exitStatus(exitCode)));
      ws.close(1000);
    }
    return { exitCode, closedByClient: gone };
  })();
}

/** The server class streams are served with, for callers outside this package (benchmarks). */
export { WebSocketServer } from "ws";
