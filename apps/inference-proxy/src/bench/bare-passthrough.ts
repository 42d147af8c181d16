import { Hono } from "hono";
import { Agent, type Dispatcher, request } from "undici";

/**
 * The benchmark's baseline: a bare Hono app that forwards to one upstream and streams the answer
 * back, with no auth, spend, metering or policy. What the proxy adds is measured against this.
 */
export function createBarePassThrough(upstreamOrigin: string): { app: Hono; close(): Promise<void> } {
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 2048 });
  const app = new Hono();
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
    return new Response(res.body as unknown as ReadableStream, { status: res.statusCode, headers });
  });
  return { app, close: () => dispatcher.close() };
}
