import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import type { SandboxDriver } from "../src/driver/types.ts";
import { serveStream } from "../src/routes/exec-stream/channels.ts";

export interface Session {
  ws: WebSocket;
  out: Buffer[];
  err: Buffer[];
  status: Promise<Record<string, unknown>>;
}

/** A client written against the Kubernetes streaming protocol, as kubectl and client-go speak it. */
export function connect(url: string, protocol: string): Promise<Session> {
  const ws = new WebSocket(url, [protocol]);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let resolveStatus: (s: Record<string, unknown>) => void = () => {};
  const status = new Promise<Record<string, unknown>>((r) => {
    resolveStatus = r;
  });
  ws.on("message", (data: Buffer) => {
    const channel = data[0];
    const payload = data.subarray(1);
    if (channel === 1) out.push(payload);
    if (channel === 2) err.push(payload);
    if (channel === 3) resolveStatus(JSON.parse(payload.toString("utf8")));
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ ws, out, err, status }));
    ws.once("error", reject);
  });
}

export const q = (argv: string[], extra = "") =>
  `?${argv.map((a) => `command=${encodeURIComponent(a)}`).join("&")}${extra}`;

export const send = (ws: WebSocket, channel: number, data: string | Buffer) =>
  ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(data)]));

/**
 * The service's WebSocket exec framing (serveStream) over a driver's exec, on port 0: the query
 * carries `command`, `tty`, `cols` and `rows` as the exec endpoint's does.
 */
export async function startExecServer(driver: SandboxDriver, sandboxId: string) {
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => ["v5.channel.k8s.io", "v4.channel.k8s.io"].find((p) => offered.has(p)) ?? false,
  });
  const server = createServer();
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://x");
    void driver
      .exec(sandboxId, {
        argv: url.searchParams.getAll("command"),
        tty: url.searchParams.get("tty") === "true",
        cols: Number(url.searchParams.get("cols") ?? 80),
        rows: Number(url.searchParams.get("rows") ?? 24),
      })
      .then((proc) => wss.handleUpgrade(req, socket, head, (ws) => void serveStream(ws, proc)));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/exec`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
