// The relay reads the tunnel's WebSocket messages with the same bound the platform reads the
// relay's: HTTP/2 never writes one near it, and one declared far larger ends the tunnel as soon as
// its length is read, instead of being gathered in memory.
import { mkdtempSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import type { Relay } from "../src/index.ts";
import { relayToLocalPlatform } from "./fixtures/local-relay.ts";

describe("a tunnel message far larger than HTTP/2 ever writes", () => {
  const dir = mkdtempSync(join(tmpdir(), "relay-message-"));
  let server: WebSocketServer;
  let relay: Relay;
  const closes: number[] = [];

  beforeAll(async () => {
    server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise((resolve) => server.once("listening", resolve));
    server.on("connection", (ws) => {
      ws.on("close", (code) => closes.push(code));
      // A binary frame declaring 64 MiB (unmasked, as a server's is), and then only a little of it.
      const head = Buffer.alloc(10);
      head[0] = 0x82;
      head[1] = 127;
      head.writeBigUInt64BE(64n * 1024n * 1024n, 2);
      (ws as unknown as { _socket: Socket })._socket.write(Buffer.concat([head, Buffer.alloc(1024)]));
    });
    const { port } = server.address() as { port: number };
    relay = relayToLocalPlatform(port, dir, "cl_big", {
      minBackoffMs: 60_000,
      maxBackoffMs: 60_000,
    });
    await relay.start();
  });
  afterAll(async () => {
    await relay?.stop();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("ends the tunnel as soon as its length is read (1009, message too big)", async () => {
    const deadline = Date.now() + 3000;
    while (closes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(closes).toEqual([1009]);
    expect(relay.connected).toBe(false);
  });
});
