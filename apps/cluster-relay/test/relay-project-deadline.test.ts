// Before it verifies any request the relay asks the control plane for its cluster's project. An
// answer that never comes (a proxy that lost the request) is given up and asked again, instead of
// leaving every request through the tunnel unverified, and so unanswered, for minutes.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { CLUSTER_JWT_HEADER, CLUSTER_JWT_TTL_HEADER, type Relay } from "../src/index.ts";
import { relayToLocalPlatform } from "./fixtures/local-relay.ts";

describe("the relay's question for its project, never answered", () => {
  const dir = mkdtempSync(join(tmpdir(), "relay-project-"));
  const asked: ServerResponse[] = [];
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === "/v1/clusters/cl_quiet")
      asked.push(res); // never answered
    else res.writeHead(404).end();
  });
  const tunnels = new WebSocketServer({ noServer: true });
  let relay: Relay;

  beforeAll(async () => {
    http.on("upgrade", (req, socket, head) => {
      tunnels.once("headers", (headers) => {
        headers.push(`${CLUSTER_JWT_HEADER}: jwt-of-the-cluster`, `${CLUSTER_JWT_TTL_HEADER}: 300`);
      });
      tunnels.handleUpgrade(req, socket, head, () => {});
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as { port: number };
    relay = relayToLocalPlatform(port, dir, "cl_quiet", {
      requestTimeoutMs: 300,
    });
    await relay.start();
  });
  afterAll(async () => {
    await relay?.stop();
    for (const res of asked) res.destroy();
    tunnels.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("is given up at the deadline and asked again", async () => {
    const deadline = Date.now() + 4000;
    while (asked.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(asked.length).toBeGreaterThanOrEqual(2);
    // The first question's connection was let go of, not left open beside the next.
    expect(asked[0]?.req.socket.destroyed || asked[0]?.req.destroyed).toBe(true);
  });
});
