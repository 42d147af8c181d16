import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { serveStream } from "../src/routes/exec-stream/channels.ts";
import { newDriver, requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();

interface Session {
  ws: WebSocket;
  out: Buffer[];
  err: Buffer[];
  status: Promise<Record<string, unknown>>;
}

/** A client written against the Kubernetes streaming protocol, as kubectl and client-go speak it. */
function connect(url: string, protocol: string): Promise<Session> {
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

const q = (argv: string[], extra = "") => `?${argv.map((a) => `command=${encodeURIComponent(a)}`).join("&")}${extra}`;

const send = (ws: WebSocket, channel: number, data: string | Buffer) =>
  ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(data)]));

describe.skipIf(!bwrap.available)(`WebSocket exec (Kubernetes protocol)${bwrap.reason}`, () => {
  let driver: LocalDriver;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    driver = newDriver();
    await driver.start({ id: "sbx_ws", slug: "ws", image: "default", env: {}, resources: {} });
    const wss = new WebSocketServer({
      noServer: true,
      handleProtocols: (offered) => ["v5.channel.k8s.io", "v4.channel.k8s.io"].find((p) => offered.has(p)) ?? false,
    });
    server = createServer();
    server.on("upgrade", (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://x");
      const tty = url.searchParams.get("tty") === "true";
      void driver
        .exec("sbx_ws", {
          argv: url.searchParams.getAll("command"),
          tty,
          cols: Number(url.searchParams.get("cols") ?? 80),
          rows: Number(url.searchParams.get("rows") ?? 24),
        })
        .then((proc) => wss.handleUpgrade(req, socket, head, (ws) => void serveStream(ws, proc)));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/exec`;
  });
  afterAll(async () => {
    server.close();
    await driver.close();
  });

  it("v5: stdin to EOF by a close frame, stdout and stderr, exit status on channel 3", async () => {
    const s = await connect(`${base}${q(["sh", "-c", "cat; echo oops >&2; exit 3"])}`, "v5.channel.k8s.io");
    expect(s.ws.protocol).toBe("v5.channel.k8s.io");
    send(s.ws, 0, "hello ");
    send(s.ws, 0, "world\n");
    s.ws.send(Buffer.from([255, 0]));
    const status = await s.status;
    expect(Buffer.concat(s.out).toString()).toBe("hello world\n");
    expect(Buffer.concat(s.err).toString()).toBe("oops\n");
    expect(status).toMatchObject({
      status: "Failure",
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: "3" }] },
    });
  });

  it("v4: success status", async () => {
    const s = await connect(`${base}?command=echo&command=ok`, "v4.channel.k8s.io");
    expect(await s.status).toEqual({ metadata: {}, status: "Success" });
    expect(Buffer.concat(s.out).toString()).toBe("ok\n");
  });

  it("TTY: initial size from cols/rows and resize frames seen by stty size", async () => {
    const s = await connect(
      // The second `stty size` runs once the resize is seen (or after 5 s, and then fails).
      `${base}${q(["sh", "-c", `stty size; i=0; while [ $i -lt 100 ] && [ "$(stty size)" != "43 132" ]; do sleep 0.05; i=$((i+1)); done; stty size`], "&tty=true&cols=100&rows=30")}`,
      "v5.channel.k8s.io",
    );
    await expect.poll(() => Buffer.concat(s.out).toString(), { timeout: 5000 }).toContain("30 100");
    send(s.ws, 4, JSON.stringify({ Width: 132, Height: 43 }));
    await expect.poll(() => Buffer.concat(s.out).toString(), { timeout: 5000 }).toContain("43 132");
    expect(await s.status).toMatchObject({ status: "Success" });
  });
});
