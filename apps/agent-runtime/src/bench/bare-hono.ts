// The benchmark baseline: a bare Hono handler on the same server stack that answers 202 without
// storing anything. Run as its own process by bench/runtime-webhooks.ts.
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const app = new Hono();
app.post("/agents/webhooks/:name", async (c) => {
  await c.req.text();
  return c.json({ status: "accepted", event: "unknown", runId: "run_baseline" }, 202);
});
serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${info.port}` })}\n`);
});
