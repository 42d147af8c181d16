import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { serveFetch } from "../src/serve.ts";

/** Opens a raw upgrade the server accepts and holds (as a tunnel or exec WebSocket would). */
function openUpgrade(port: number): Promise<{ closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write("GET /hold HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
    });
    socket.once("error", reject);
    socket.once("data", (chunk) => {
      expect(chunk.toString()).toContain("101");
      resolve({ closed: new Promise((done) => socket.once("close", () => done())) });
    });
  });
}

describe("serveFetch close", () => {
  it("cuts an upgraded connection its service left open after the grace period, so close resolves", async () => {
    const running = await serveFetch(() => new Response("ok"), { port: 0, upgradeGraceMs: 200 });
    running.server.on("upgrade", (_req, socket: Duplex) => {
      socket.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
    });
    const held = await openUpgrade(running.port);
    const started = performance.now();
    await running.close();
    await held.closed;
    // Without the cut, close waits for the client to go away (never, here).
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("leaves an upgraded connection alone while the server runs", async () => {
    const running = await serveFetch(() => new Response("ok"), { port: 0, upgradeGraceMs: 50 });
    running.server.on("upgrade", (_req, socket: Duplex) => {
      socket.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
    });
    const held = await openUpgrade(running.port);
    let closedEarly = false;
    void held.closed.then(() => {
      closedEarly = true;
    });
    // Asserts that nothing happens: twice the grace is long enough for a cut that should not come.
    await new Promise((r) => setTimeout(r, 100));
    expect(closedEarly).toBe(false);
    await running.close();
    await held.closed;
  });
});
