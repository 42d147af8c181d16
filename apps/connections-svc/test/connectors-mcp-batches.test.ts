// One POST to the platform's MCP endpoint is one request to the gateway's rate limit, but a JSON-RPC
// batch carries up to a hundred messages (the SDK's own ceiling): each one a tool call to a far
// side, a policy decision and an audit record. A batch may carry only a few of the costly ones.
import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_COSTLY_MESSAGES_PER_POST } from "../src/mcp/endpoint.ts";
import { startMcpUpstream } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`JSON-RPC batches on the MCP endpoints${pg.reason}`, () => {
  let w: World;
  let mcp: Awaited<ReturnType<typeof startMcpUpstream>>;

  beforeAll(async () => {
    [w, mcp] = await Promise.all([startWorld("connectors_mcp_batches"), startMcpUpstream()]);
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "upstream",
      url: mcp.url,
    });
    expect(res.status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await w?.close();
    await mcp?.close();
  });

  it("answers the tool calls and listings past the ceiling with a JSON-RPC error, and makes none of them", async () => {
    const batch = [
      ...Array.from({ length: 40 }, (_, i) => ({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: { name: "upstream__echo", arguments: { text: `n${i}` } },
      })),
      ...Array.from({ length: 20 }, (_, i) => ({ jsonrpc: "2.0", id: 100 + i, method: "tools/list" })),
      { jsonrpc: "2.0", id: 200, method: "ping" },
    ];
    const identity = await signIdentity(w.tenancy.keys, w.developer, { audience: "connections" });
    const res = await w.service.fetch(
      new Request(`http://connections.test/projects/${w.projectId}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-agentplane-identity": identity,
        },
        body: JSON.stringify(batch),
      }),
    );
    expect(res.status).toBe(200);
    const answers = (await res.json()) as Array<{ id: number; result?: unknown; error?: { code: number } }>;
    expect(answers).toHaveLength(batch.length);
    const served = answers.filter((a) => a.id < 200 && a.result);
    const refused = answers.filter((a) => a.error);
    expect(served).toHaveLength(MAX_COSTLY_MESSAGES_PER_POST);
    expect(refused).toHaveLength(60 - MAX_COSTLY_MESSAGES_PER_POST);
    expect(refused.every((a) => a.error?.code === -32600)).toBe(true);
    expect(mcp.calls.length).toBeLessThanOrEqual(MAX_COSTLY_MESSAGES_PER_POST);
    // A ping costs nothing and is answered.
    expect(answers.find((a) => a.id === 200)?.result).toEqual({});
  });
});
