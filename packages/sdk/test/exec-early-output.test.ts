import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket as NodeWebSocket } from "ws";
import { openExecStream, type WebSocketConstructor } from "../src/exec.ts";

// A command that finishes at once can have its output, status and close in the same packet as the
// upgrade answer: the client then sees them before the caller could subscribe to stdout.

/** One unmasked server frame (payloads under 126 bytes). */
function frame(opcode: number, payload: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([0x80 | opcode, payload.length]), payload]);
}
const binary = (channel: number, text: string) =>
  frame(0x2, Buffer.concat([Buffer.from([channel]), Buffer.from(text)]));

let server: Server;
let baseUrl = "";
const sockets = new Set<Duplex>();

beforeAll(async () => {
  server = createServer();
  server.on("upgrade", (req, socket) => {
    sockets.add(socket);
    const accept = createHash("sha1")
      .update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest("base64");
    const status = JSON.stringify({ status: "Failure", details: { causes: [{ reason: "ExitCode", message: "3" }] } });
    socket.end(
      Buffer.concat([
        Buffer.from(
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
            `Sec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`,
        ),
        binary(1, "early out\n"),
        binary(2, "early err\n"),
        binary(3, status),
        frame(0x8, Buffer.from([0x03, 0xe8])),
      ]),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe("output that arrives with the upgrade answer", () => {
  for (const [name, Ctor] of [
    ["ws package", NodeWebSocket as unknown as WebSocketConstructor],
    ["global WebSocket", undefined],
  ] as const) {
    it(`reaches listeners added after the stream opened (${name})`, async () => {
      const stream = await openExecStream({
        baseUrl,
        projectId: "prj_x",
        sandboxId: "sbx_x",
        command: ["echo"],
        ...(Ctor ? { WebSocket: Ctor } : {}),
      });
      const out: string[] = [];
      const err: string[] = [];
      const decoder = new TextDecoder();
      stream.onStdout((c) => out.push(decoder.decode(c)));
      stream.onStderr((c) => err.push(decoder.decode(c)));
      const exit = await stream.exited;
      expect(exit.exitCode).toBe(3);
      expect(out.join("")).toBe("early out\n");
      expect(err.join("")).toBe("early err\n");
    });
  }
});
