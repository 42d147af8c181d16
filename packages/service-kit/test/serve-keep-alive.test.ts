import type { Server } from "node:http";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { serveFetch } from "../src/serve.ts";

/** One request on a raw keep-alive connection: the answer's head, and the socket left open. */
function requestOnce(port: number): Promise<{ head: string; socket: Socket; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    const closed = new Promise<number>((done) => socket.once("close", () => done(performance.now())));
    socket.once("error", reject);
    socket.once("data", (chunk) => resolve({ head: chunk.toString().split("\r\n\r\n")[0] ?? "", socket, closed }));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("serveFetch keep-alive", () => {
  it("holds an idle connection past Node's 5 s default and says so: above a load balancer's 60 s", async () => {
    const running = await serveFetch(() => new Response("ok"), { port: 0 });
    try {
      const { head, socket, closed } = await requestOnce(running.port);
      expect(head.toLowerCase()).toContain("keep-alive: timeout=65");
      let gone = false;
      void closed.then(() => {
        gone = true;
      });
      await sleep(5_600);
      expect(gone).toBe(false);
      socket.destroy();
    } finally {
      await running.close();
    }
  }, 15_000);

  it("closes an idle connection after the time it is given", async () => {
    const running = await serveFetch(() => new Response("ok"), { port: 0, keepAliveTimeoutMs: 1_000 });
    try {
      const { head, closed } = await requestOnce(running.port);
      const answered = performance.now();
      expect(head.toLowerCase()).toContain("keep-alive: timeout=1");
      expect((await closed) - answered).toBeLessThan(4_000);
      const server = running.server as Server;
      expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
    } finally {
      await running.close();
    }
  });
});
