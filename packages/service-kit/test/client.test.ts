import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { INTERNAL_IDENTITY_HEADER, type Principal, REQUEST_ID_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { afterAll, describe, expect, it, vi } from "vitest";
import {
  BUFFERED_RESPONSE_BYTES,
  createServiceApp,
  generateInternalKeys,
  httpFetch,
  requirePrincipal,
  ServiceClient,
  serveFetch,
} from "../src/index.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end();
const server = createServer((req, res) => handler(req, res));
server.listen(0, "127.0.0.1");
await once(server, "listening");
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

/** Resolves when `release` is called: lets a handler hold the rest of its body. */
function gate(): { wait: Promise<void>; release(): void } {
  let release = () => {};
  const wait = new Promise<void>((r) => {
    release = r;
  });
  return { wait, release };
}

describe("httpFetch", () => {
  const client = httpFetch(base);

  it("send: path and query, headers less the connection's own, the body streamed through", async () => {
    let seen: { url?: string; headers?: IncomingMessage["headers"]; body?: string } = {};
    handler = async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      seen = { url: req.url ?? "", headers: req.headers, body };
      res.end("ok");
    };
    const res = await client.send({
      method: "POST",
      path: "/v1/things?q=a%20b&x=1",
      headers: { host: "gateway.example", "x-request-id": "r1", "content-type": "text/plain" },
      body: new Blob(["hello ", "world"]).stream(),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
    expect(seen.url).toBe("/v1/things?q=a%20b&x=1");
    expect(seen.body).toBe("hello world");
    expect(seen.headers?.["x-request-id"]).toBe("r1");
    // Host is the service's own, not the caller's.
    expect(seen.headers?.host).toBe(new URL(base).host);
  });

  it("a small response of declared length arrives whole, with every header value kept", async () => {
    handler = (_req, res) => {
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.setHeader("content-type", "application/json");
      res.statusCode = 201;
      res.end(JSON.stringify({ id: "x" }));
    };
    const res = await client(new Request(`${base}/small`));
    expect(res.status).toBe(201);
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await res.json()).toEqual({ id: "x" });
  });

  it("a small response is read whole before it is handed on (one write for headers and body)", async () => {
    const rest = gate();
    handler = async (_req, res) => {
      res.writeHead(200, { "content-length": "10" });
      res.write("hello");
      await rest.wait;
      res.end("world");
    };
    let settled = false;
    const pending = client(new Request(`${base}/held`)).then((r) => {
      settled = true;
      return r;
    });
    // Asserts that nothing happens: on loopback the first five bytes arrive within a millisecond,
    // so a client handing the response on early would have settled well within this wait.
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    rest.release();
    expect(await (await pending).text()).toBe("helloworld");
  });

  it("a response of unknown length streams: its first chunk is readable before the rest is written", async () => {
    const rest = gate();
    handler = async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      await rest.wait;
      res.end("data: two\n\n");
    };
    const res = await client(new Request(`${base}/events`));
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: one\n\n");
    rest.release();
    let tail = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) tail += new TextDecoder().decode(r.value);
    expect(tail).toBe("data: two\n\n");
  });

  it("a response declared larger than the buffered size streams too", async () => {
    const rest = gate();
    const size = BUFFERED_RESPONSE_BYTES + 1024;
    handler = async (_req, res) => {
      res.writeHead(200, { "content-length": String(size) });
      res.write(Buffer.alloc(1024, "a"));
      await rest.wait;
      res.end(Buffer.alloc(size - 1024, "b"));
    };
    const res = await client(new Request(`${base}/large`));
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value?.[0]).toBe("a".charCodeAt(0));
    rest.release();
    let total = first.value!.byteLength;
    for (let r = await reader.read(); !r.done; r = await reader.read()) total += r.value.byteLength;
    expect(total).toBe(size);
  });

  it("a streamed answer read slowly arrives whole; cancelling one closes the connection to the service", async () => {
    const size = 4 * BUFFERED_RESPONSE_BYTES;
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(Buffer.alloc(size, "c"));
    };
    const slow = await client(new Request(`${base}/slow`));
    const reader = slow.body!.getReader();
    let total = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      expect(r.value.byteLength).toBeGreaterThan(0);
      total += r.value.byteLength;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(total).toBe(size);

    let closed = false;
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      res.on("close", () => {
        closed = true;
      });
    };
    const events = await client(new Request(`${base}/forever`));
    const eventReader = events.body!.getReader();
    const first = await eventReader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: one\n\n");
    await eventReader.cancel();
    await vi.waitFor(() => expect(closed).toBe(true));
  });

  it("204 and HEAD answers have no body", async () => {
    handler = (req, res) => {
      res.statusCode = req.url === "/empty" ? 204 : 200;
      if (req.method === "HEAD") res.setHeader("content-length", "12");
      res.end();
    };
    const empty = await client(new Request(`${base}/empty`, { method: "DELETE" }));
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const head = await client(new Request(`${base}/doc`, { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("12");
    expect(head.body).toBeNull();
  });
});

describe("ServiceClient over HTTP", () => {
  it("refuses a path an id turned into a dot segment, sending nothing", async () => {
    const keys = await generateInternalKeys();
    const sent: string[] = [];
    const client = new ServiceClient(
      "sandbox",
      async (request: Request) => {
        sent.push(new URL(request.url).pathname);
        return Response.json({});
      },
      keys,
    );
    const principal: Principal = { type: "user", id: "usr_a", displayName: "A" };
    for (const id of ["..", ".", "%2e%2e", ".%2E"]) {
      const call = client.request("POST", `/v1/projects/p1/sandboxes/${id}/stop`, { principal });
      await expect(call, id).rejects.toMatchObject({ status: 400, detail: "An identifier cannot be . or .." });
    }
    expect(sent).toEqual([]);
    // Dots inside a segment, or after the query starts, are not path segments.
    await client.request("POST", "/v1/projects/p1/sandboxes/a..b/stop?next=../x", { principal });
    expect(sent).toEqual(["/v1/projects/p1/sandboxes/a..b/stop"]);
  });

  it("signs a principal's identity once for its calls, sends the request id apart, rethrows problems", async () => {
    const keys = await generateInternalKeys();
    const app = createServiceApp({ name: "tenancy", keys });
    const seen: { identity?: string; requestId?: string; body?: unknown }[] = [];
    app.post("/who", async (c) => {
      seen.push({
        identity: c.req.header(INTERNAL_IDENTITY_HEADER),
        requestId: c.req.header(REQUEST_ID_HEADER),
        body: await c.req.json(),
      });
      return c.json(requirePrincipal(c));
    });
    app.get("/missing", () => {
      throw new ProblemError("not-found", { detail: "no such thing" });
    });
    const running = await serveFetch(app.fetch, { port: 0, hostname: "127.0.0.1" });
    try {
      const client = new ServiceClient("tenancy", httpFetch(running.url), keys);
      const alice: Principal = { type: "user", id: "usr_alice", displayName: "Alice" };
      const bob: Principal = { type: "user", id: "usr_bob", displayName: "Bob" };
      expect(await client.request("POST", "/who", { principal: alice, body: { n: 1 }, requestId: "req-1" })).toEqual(
        alice,
      );
      expect(await client.request("POST", "/who", { principal: alice, body: { n: 2 }, requestId: "req-2" })).toEqual(
        alice,
      );
      expect(await client.request("POST", "/who", { principal: bob, body: { n: 3 } })).toEqual(bob);
      expect(seen.map((s) => [s.requestId, s.body])).toEqual([
        ["req-1", { n: 1 }],
        ["req-2", { n: 2 }],
        [undefined, { n: 3 }],
      ]);
      // One signature for Alice's two calls; Bob has his own.
      expect(seen[1]?.identity).toBe(seen[0]?.identity);
      expect(seen[2]?.identity).not.toBe(seen[0]?.identity);
      await expect(client.request("GET", "/missing", { principal: alice })).rejects.toMatchObject({
        status: 404,
        detail: "no such thing",
      });
    } finally {
      await running.close();
    }
  });
});
