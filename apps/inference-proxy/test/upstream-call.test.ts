import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type CallOutcome, UpstreamCall } from "@agentplane/service-kit";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

type Route = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Route>();
let server: Server;
let origin: string;
const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: null });

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => routes.get(req.url ?? "")?.(req, res));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await dispatcher.close();
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

function call(path: string, method: "GET" | "POST" = "POST") {
  const chunks: Uint8Array[] = [];
  const ended = vi.fn<(outcome: CallOutcome) => void>();
  const started = vi.fn();
  const upstream = new UpstreamCall(
    dispatcher,
    {
      origin,
      path,
      method,
      headers: { "content-type": "application/json", "content-length": "2" },
      body: method === "POST" ? Buffer.from("{}") : undefined,
      headersTimeout: 5_000,
      bodyTimeout: 5_000,
    },
    { onStart: started, onChunk: (chunk) => chunks.push(chunk), onEnd: ended },
  );
  return { upstream, chunks, ended, started };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) parts.push(chunk);
  return Buffer.concat(parts);
}

describe("UpstreamCall", () => {
  it("a small content-length answer comes whole with its headers, intact, and the call is complete", async () => {
    const json = JSON.stringify({ id: "msg_1", usage: { input_tokens: 3, output_tokens: 1 } });
    routes.set("/whole", (_req, res) => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(json)),
        "x-upstream": "yes",
      });
      res.end(json);
    });
    const { upstream, chunks, ended, started } = call("/whole");
    await upstream.started;
    expect(upstream.status).toBe(200);
    expect(upstream.headers["content-length"]).toBe(String(Buffer.byteLength(json)));
    expect(started).toHaveBeenCalledWith(200, expect.objectContaining({ "x-upstream": "yes" }));
    const body = upstream.complete();
    expect(body && Buffer.from(body).toString()).toBe(json);
    expect(Buffer.concat(chunks).toString()).toBe(json);
    expect(ended).toHaveBeenCalledExactlyOnceWith("complete");
  });

  it("an SSE stream hands its first event on before the upstream ends, then the rest", async () => {
    let finish: () => void = () => {};
    routes.set("/sse", (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: message_start\ndata: {}\n\n");
      finish = () => res.end("event: message_stop\ndata: {}\n\n");
    });
    const { upstream, ended } = call("/sse");
    await upstream.started;
    expect(upstream.complete()).toBeUndefined();
    const reader = upstream.stream().getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe("event: message_start\ndata: {}\n\n");
    expect(ended).not.toHaveBeenCalled();
    finish();
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    expect(rest).toBe("event: message_stop\ndata: {}\n\n");
    expect(ended).toHaveBeenCalledExactlyOnceWith("complete");
  });

  it("a large answer streams intact, and a client that does not read pauses the upstream", async () => {
    const size = 32 * 1024 * 1024;
    const payload = Buffer.alloc(size, "abcdefghij");
    routes.set("/large", (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(size) });
      res.end(payload);
    });
    const { upstream, chunks, ended } = call("/large");
    await upstream.started;
    expect(upstream.complete()).toBeUndefined();
    const stream = upstream.stream();
    // Nobody reads: what the proxy takes in stays near its buffer plus the sockets' own.
    await new Promise((done) => setTimeout(done, 300));
    const taken = chunks.reduce((n, c) => n + c.byteLength, 0);
    expect(taken).toBeLessThan(size / 2);
    const body = await readAll(stream);
    expect(body.byteLength).toBe(size);
    expect(body.equals(payload)).toBe(true);
    expect(ended).toHaveBeenCalledExactlyOnceWith("complete");
  });

  it("a client that cancels mid-stream aborts the upstream request", async () => {
    const upstreamClosed = new Promise<void>((done) => {
      routes.set("/cancel", (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("event: message_start\ndata: {}\n\n");
        res.on("close", () => done());
      });
    });
    const { upstream, ended } = call("/cancel");
    await upstream.started;
    const reader = upstream.stream().getReader();
    await reader.read();
    await reader.cancel();
    await upstreamClosed;
    expect(ended).toHaveBeenCalledExactlyOnceWith("aborted");
  });

  it("an abort before the headers rejects `started`; an unreachable upstream too", async () => {
    routes.set("/never", () => {});
    const { upstream, ended } = call("/never");
    setTimeout(() => upstream.abort(new Error("client disconnected")), 50);
    await expect(upstream.started).rejects.toThrow("client disconnected");
    expect(ended).not.toHaveBeenCalled();

    const gone = new UpstreamCall(
      dispatcher,
      {
        origin: "http://127.0.0.1:1",
        path: "/",
        method: "GET",
        headers: {},
        body: undefined,
        headersTimeout: 5_000,
        bodyTimeout: 5_000,
      },
      { onStart: () => {}, onChunk: () => {}, onEnd: () => {} },
    );
    await expect(gone.started).rejects.toThrow();
  });
});
