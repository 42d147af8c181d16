import { createServer, Agent as HttpAgent, request as httpRequest, type Server } from "node:http";
import { webStreamOf } from "@agentplane/service-kit";
import { Hono } from "hono";
import { proxy } from "hono/proxy";
import { Agent, type Dispatcher, request } from "undici";

/**
 * The benchmark's baselines, forwarding to one upstream with no auth, spend, metering or policy:
 * - `/bare/*`: undici's request, the answer streamed back as a web stream. What the proxy adds
 *   is measured against this one. (Handing the Node server undici's Node stream instead makes
 *   it poll the body on a timer: half the throughput, a baseline too easy to beat.)
 * - `/hono-proxy/*`: Hono's own proxy helper (`hono/proxy`, fetch underneath), for reference.
 */
export function createBarePassThrough(upstreamOrigin: string): { app: Hono; close(): Promise<void> } {
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 2048 });
  const app = new Hono();
  app.all("/hono-proxy/*", (c) => {
    const url = new URL(c.req.url);
    return proxy(`${upstreamOrigin}${url.pathname.replace(/^\/hono-proxy/, "")}${url.search}`, c.req);
  });
  app.all("*", async (c) => {
    const url = new URL(c.req.url);
    const body = c.req.method === "GET" ? undefined : Buffer.from(await c.req.arrayBuffer());
    const res = await request(`${upstreamOrigin}${url.pathname.replace(/^\/bare/, "")}${url.search}`, {
      method: c.req.method as Dispatcher.HttpMethod,
      headers: { "content-type": c.req.header("content-type") ?? "application/json" },
      ...(body ? { body } : {}),
      dispatcher,
    });
    const headers = new Headers();
    const type = res.headers["content-type"];
    if (typeof type === "string") headers.set("content-type", type);
    return new Response(webStreamOf(res.body), { status: res.statusCode, headers });
  });
  return { app, close: () => dispatcher.close() };
}

/**
 * The floor of any proxy in a Node process: `node:http` in and out, no framework, no web streams,
 * the answer piped back as it arrives. What one more process hop costs on this machine.
 */
export function createNodePassThrough(upstreamOrigin: string): Server {
  const upstream = new URL(upstreamOrigin);
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 2048 });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const out = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url?.replace(/^\/node/, ""),
          method: req.method,
          agent,
          headers: { "content-type": req.headers["content-type"] ?? "application/json", "content-length": body.length },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, { "content-type": answer.headers["content-type"] ?? "" });
          answer.pipe(res);
        },
      );
      out.on("error", () => res.destroy());
      out.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.once("close", () => agent.destroy());
  return server;
}
