import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcessMcpClient } from "./connectors-fixtures/in-process-client.ts";
import { startSseMcpUpstream } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
type Json = Record<string, unknown>;

describe.skipIf(!pg.available)(`remote MCP connector over the older HTTP+SSE transport${pg.reason}`, () => {
  let w: World;
  let sse: Awaited<ReturnType<typeof startSseMcpUpstream>>;
  let client: Client | undefined;

  beforeAll(async () => {
    [w, sse] = await Promise.all([startWorld("connectors_sse"), startSseMcpUpstream()]);
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await w?.close();
    await sse?.close();
  });

  it("discovers the tools after Streamable HTTP is refused, and calls them through REST and MCP", async () => {
    const preview = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, {
      url: `${sse.url}/sse`,
    });
    expect(preview.status, await preview.clone().text()).toBe(200);
    expect(((await preview.json()) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual([
      "add",
      "echo",
    ]);
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "legacy",
      url: `${sse.url}/sse`,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const connector = (await created.json()) as { id: string; status: string; toolCount: number };
    expect(connector).toMatchObject({ status: "ready", toolCount: 2 });
    // Streamable HTTP was tried first and refused; the event stream carried the session.
    expect(sse.rejectedPosts).toBeGreaterThan(0);
    expect(sse.streams).toBeGreaterThan(0);

    const rest = await w.call("POST", `/v1/mcp-servers/${connector.id}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: 2, b: 40 },
    });
    expect(rest.status, await rest.clone().text()).toBe(200);
    expect(((await rest.json()) as Json).content).toEqual([{ type: "text", text: "42" }]);
    const bad = await w.call("POST", `/v1/mcp-servers/${connector.id}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: "two" },
    });
    expect(bad.status).toBe(400);

    client = await inProcessMcpClient(
      `http://connections.test/projects/${w.projectId}/mcp`,
      () => signIdentity(w.tenancy.keys, w.developer, { audience: "connections" }),
      (request) => w.service.fetch(request),
    );
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["legacy__add", "legacy__echo"]),
    );
    const echoed = await client.callTool({ name: "legacy__echo", arguments: { text: "over sse" } });
    expect(echoed.content).toEqual([{ type: "text", text: "echo: over sse" }]);
    expect(sse.calls).toEqual(["add", "echo"]);
  });
});
