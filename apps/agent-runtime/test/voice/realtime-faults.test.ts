import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { silence } from "@agentplane/testkit/realtime";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { MAX_SEND_BACKLOG_BYTES, RealtimeClient } from "../../src/voice/realtime.ts";

const logger = pino({ level: "silent" });
let server: WebSocketServer | undefined;
let client: RealtimeClient | undefined;
let http: Server | undefined;
/** The sockets of upgrade requests, which the http server no longer tracks. */
const upgraded = new Set<Socket>();

afterEach(async () => {
  for (const socket of upgraded) socket.destroy();
  upgraded.clear();
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  http = undefined;
  client?.close();
  for (const ws of server?.clients ?? []) ws.terminate();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  client = undefined;
});

/**
 * A realtime API that confirms the session and then stops reading the socket (a vendor that hangs,
 * a half-open connection): nothing closes, nothing is read.
 */
async function stallingVendor(): Promise<{ url: string; connections: () => number }> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  server = wss;
  await new Promise((resolve) => wss.once("listening", resolve));
  let connections = 0;
  wss.on("connection", (ws: WebSocket) => {
    connections += 1;
    ws.once("message", () => {
      ws.send(JSON.stringify({ type: "session.updated" }));
      (ws as unknown as { _socket: Socket })._socket.pause();
    });
  });
  const { port } = wss.address() as AddressInfo;
  return { url: `ws://127.0.0.1:${port}/v1/realtime`, connections: () => connections };
}

const options = (url: string) => ({
  url,
  apiKey: "vk-test",
  instructions: "Be brief.",
  names: ["Prism"],
  logger,
  connectTimeoutMs: 3000,
});

describe("what a realtime API sends that it should not", () => {
  it("a frame that is not a JSON event is skipped, not thrown out of the socket's handler", async () => {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    server = wss;
    await new Promise((resolve) => wss.once("listening", resolve));
    wss.on("connection", (ws: WebSocket) =>
      ws.once("message", () => {
        for (const frame of ["<html>502 Bad Gateway</html>", "null", "[]"]) ws.send(frame);
        ws.send(JSON.stringify({ type: "session.updated" }));
      }),
    );
    client = new RealtimeClient(options(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/realtime`));
    await client.connect();
    expect(client.ready).toBe(true);
  });

  it("a refused handshake (HTTP 401) leaves no connection open behind it", async () => {
    const refusing = createServer();
    http = refusing;
    // Answers the upgrade with a 401 and leaves the connection open, as a keep-alive server does.
    refusing.on("upgrade", (_req, socket: Socket) => {
      upgraded.add(socket);
      // Its side closes once the client's has.
      socket.on("end", () => socket.end());
      socket.write("HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nnot ok");
    });
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    const open = () =>
      new Promise<number>((resolve, reject) => refusing.getConnections((e, n) => (e ? reject(e) : resolve(n))));
    client = new RealtimeClient(options(`ws://127.0.0.1:${(refusing.address() as AddressInfo).port}/v1/realtime`));
    await expect(client.connect()).rejects.toThrow(/HTTP 401/);
    const end = Date.now() + 2000;
    while ((await open()) > 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await open()).toBe(0);
  });
});

describe("a realtime API that stops reading", () => {
  it("is a lost connection once the unsent audio passes the bound: reconnected once, then the call fails", async () => {
    const vendor = await stallingVendor();
    const failures: string[] = [];
    client = new RealtimeClient(
      {
        url: vendor.url,
        apiKey: "vk-test",
        instructions: "Be brief.",
        names: ["Prism"],
        logger,
        connectTimeoutMs: 3000,
      },
      { onFailed: (reason) => failures.push(reason) },
    );
    await client.connect();
    // A call's audio, a second at a time, for at most 20 minutes' worth: before, every second of
    // it waited in memory for a vendor that never read it, and the call went on deaf.
    // Audio is dropped while a reconnect is under way, as the meeting page's is.
    const second = silence(1000);
    const deadline = Date.now() + 30_000;
    for (let sent = 0; sent < 1200 && failures.length === 0 && Date.now() < deadline; ) {
      if (client.ready) {
        client.appendAudio(second);
        sent++;
        await nextTurn();
      } else await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/stopped reading/);
    expect(vendor.connections()).toBe(2);
    expect(MAX_SEND_BACKLOG_BYTES).toBeLessThanOrEqual(2 ** 20);
  }, 60_000);
});
