import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { Readable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processFaults, type RunningServer, readAtMost, serveFetch, webStreamOf } from "../src/index.ts";

describe("a Node stream answered as a web stream", () => {
  it("hands on every chunk in order, reading only as the consumer pulls", async () => {
    let produced = 0;
    const source = new Readable({
      highWaterMark: 1,
      read() {
        produced++;
        this.push(produced <= 50 ? Buffer.from(`${produced},`) : null);
      },
    });
    const reader = webStreamOf(source).getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe("1,");
    // Nowhere near all 50 were read for the first one.
    expect(produced).toBeLessThan(10);
    let text = "1,";
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
    expect(text).toBe(Array.from({ length: 50 }, (_, i) => `${i + 1},`).join(""));
  });

  it("destroys the Node stream when it is cancelled, and errors when the Node stream fails", async () => {
    const source = new Readable({ read() {} });
    source.push("a");
    const stream = webStreamOf(source);
    const reader = stream.getReader();
    await reader.read();
    await reader.cancel();
    expect(source.destroyed).toBe(true);

    const failing = new Readable({ read() {} });
    const failed = webStreamOf(failing).getReader().read();
    failing.destroy(new Error("upstream reset"));
    await expect(failed).rejects.toThrow("upstream reset");
  });

  describe("clients that go away while an upstream answer streams", () => {
    let upstream: Server;
    let server: RunningServer;
    beforeAll(async () => {
      upstream = createServer((_req, res) => {
        const body = JSON.stringify({ text: "x".repeat(2000) });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
      await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
      const port = (upstream.address() as { port: number }).port;
      server = await serveFetch(
        async () => new Response(webStreamOf((await request(`http://127.0.0.1:${port}/`)).body)),
        { port: 0, hostname: "127.0.0.1" },
      );
    });
    afterAll(async () => {
      await server?.close();
      upstream?.close();
    });

    it("leave no fault behind (Readable.toWeb threw an uncaught exception for nearly each)", async () => {
      const before = processFaults().uncaughtExceptions;
      const port = Number(new URL(server.url).port);
      const hangUp = (delayMs: number) =>
        new Promise<void>((resolve) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write("GET / HTTP/1.1\r\nhost: x\r\n\r\n");
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, delayMs);
          });
          socket.on("error", () => resolve());
        });
      for (let round = 0; round < 40; round++) {
        await Promise.all(Array.from({ length: 20 }, (_, i) => hangUp(i % 3 === 0 ? 0 : Math.random() * 2)));
      }
      // Still answering, whole.
      const res = await fetch(server.url);
      expect((await res.json()) as { text: string }).toEqual({ text: "x".repeat(2000) });
      expect(processFaults().uncaughtExceptions).toBe(before);
    });
  });
});

describe("a web body read whole up to a limit", () => {
  const chunked = (count: number, size: number, pulled: { n: number; cancelled: boolean }) =>
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled.n++ >= count) controller.close();
        else controller.enqueue(new Uint8Array(size).fill(pulled.n));
      },
      cancel() {
        pulled.cancelled = true;
      },
    });

  it("joins every chunk within the limit, and reads no body as no bytes", async () => {
    const pulled = { n: 0, cancelled: false };
    const bytes = await readAtMost(chunked(4, 10, pulled), 40, () => new Error("too large"));
    expect(bytes.byteLength).toBe(40);
    expect([bytes[0], bytes[10], bytes[39]]).toEqual([1, 2, 4]);
    expect((await readAtMost(null, 1, () => new Error("too large"))).byteLength).toBe(0);
  });

  it("stops at the chunk that passes the limit: cancels the stream and throws the caller's error", async () => {
    const pulled = { n: 0, cancelled: false };
    await expect(readAtMost(chunked(1000, 1024, pulled), 4096, () => new Error("over 4 KiB"))).rejects.toThrow(
      "over 4 KiB",
    );
    expect(pulled.cancelled).toBe(true);
    expect(pulled.n).toBeLessThan(10);
  });
});
