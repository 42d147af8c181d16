import { execFile } from "node:child_process";
import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { serveFetch } from "../src/serve.ts";

const run = promisify(execFile);

/** The head of the answer to `request` sent on a raw connection. */
function rawHead(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    socket.once("error", reject);
    socket.once("data", (chunk) => {
      resolve(chunk.toString().split("\r\n\r\n")[0] ?? "");
      socket.destroy();
    });
  });
}

describe("serveFetch upgrades", () => {
  it("answers a request offering h2c (curl --http2) as the plain request; a WebSocket still upgrades", async () => {
    const running = await serveFetch((req) => new Response(`plain ${new URL(req.url).pathname}`), { port: 0 });
    // As a service with WebSocket endpoints does: its own upgrade listener.
    const upgrades: string[] = [];
    running.server.on("upgrade", (req: IncomingMessage, socket: Duplex) => {
      upgrades.push(String(req.headers.upgrade));
      socket.end("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    });
    try {
      const { stdout } = await run("curl", ["-s", "--http2", "-w", " %{http_code}", `${running.url}/v1/orgs`]);
      expect(stdout).toBe("plain /v1/orgs 200");
      const many = await rawHead(
        running.port,
        "GET /x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c, foo/2\r\n\r\n",
      );
      expect(many.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
      expect(upgrades).toEqual([]);

      const ws = await rawHead(
        running.port,
        "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: WebSocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      );
      expect(ws.split("\r\n")[0]).toBe("HTTP/1.1 101 Switching Protocols");
      expect(upgrades).toEqual(["WebSocket"]);
    } finally {
      await running.close();
    }
  });
});
