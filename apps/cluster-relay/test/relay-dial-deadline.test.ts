// A control plane (or a load balancer in front of it) that takes the connection and never answers
// the tunnel's upgrade must not hold the relay: it gives up the dial and dials again.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../platform/test/connections-harness.ts";
import type { Relay } from "../src/index.ts";
import { relayToLocalPlatform } from "./fixtures/local-relay.ts";

describe("a tunnel dial the control plane never answers", () => {
  const sockets: Socket[] = [];
  const closed = new Set<Socket>();
  // Reads the upgrade request and answers nothing.
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => {});
    socket.on("close", () => closed.add(socket));
    socket.resume();
  });
  const dir = mkdtempSync(join(tmpdir(), "relay-dial-"));
  let relay: Relay;
  const warnings: string[] = [];

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    relay = relayToLocalPlatform(port, dir, "cl_silent", {
      logger: { info() {}, warn: (_obj, msg) => warnings.push(msg ?? ""), error() {} },
      minBackoffMs: 10,
      maxBackoffMs: 20,
      handshakeTimeoutMs: 300,
    });
    await relay.start();
  });
  afterAll(async () => {
    await relay?.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("is given up at its deadline, the connection closed, and dialled again", async () => {
    await waitFor(() => sockets.length >= 3, 5000, "the relay to dial again");
    // Each abandoned dial is closed, not left open beside the next one.
    await waitFor(() => sockets.slice(0, 2).every((s) => closed.has(s)), 2000, "closed dials");
    expect(warnings).toContain("tunnel error");
    expect(relay.connected).toBe(false);
  });
});
