import type { Principal } from "@agentplane/contracts";
import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { API_TOKEN, type ApiUpstream, startApiUpstream, startMcpUpstream } from "./connectors-fixtures/upstreams.ts";
import { DENY_RULE, startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`the platform's MCP endpoints${pg.reason}`, () => {
  let w: World;
  let api: ApiUpstream;
  let mcp: Awaited<ReturnType<typeof startMcpUpstream>>;
  const clients: Client[] = [];

  /** Clients whose standalone SSE stream (the one `list_changed` arrives on) the service has opened. */
  const listening = new WeakSet<Client>();

  /** The SDK client against the service in process; the identity header stands in for the gateway. */
  async function connect(path: string, as: Principal): Promise<Client> {
    const identity = await signIdentity(w.tenancy.keys, as, { audience: "connections" });
    const client = new Client({ name: "test-client", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`http://connections.test${path}`), {
      fetch: async (input, init) => {
        const request = new Request(input, init);
        request.headers.set("x-agentplane-identity", identity);
        const response = await w.service.fetch(request);
        // The service watches for changes before it answers the GET that opens the stream.
        if (request.method === "GET" && response.status === 200) listening.add(client);
        return response;
      },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    [w, api, mcp] = await Promise.all([startWorld("connectors_mcp"), startApiUpstream(), startMcpUpstream()]);
    const http = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "commerce",
      specUrl: `${api.url}/openapi.json`,
      credentialId: w.credentialId,
      include: { tags: ["Account"] },
    });
    expect(http.status, await http.clone().text()).toBe(201);
    const remote = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "upstream",
      url: mcp.url,
    });
    expect(remote.status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await w?.close();
    await api?.close();
    await mcp?.close();
  });

  it("lists connector tools namespaced <connector>__<tool> and the platform's tools", async () => {
    const client = await connect(`/projects/${w.projectId}/mcp`, w.developer);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["commerce__getAccount", "commerce__listAccounts", "upstream__echo", "upstream__add"]),
    );
    expect(names).toEqual(
      expect.arrayContaining(["sandboxes_list", "sandboxes_create", "sandboxes_exec", "sandboxes_effective_policy"]),
    );
    expect(names).not.toContain("audit_trail");
    expect(names.filter((n) => n.startsWith("commerce__"))).toHaveLength(8);
    const owners = await (await connect(`/projects/${w.projectId}/mcp`, w.owner)).listTools();
    expect(owners.tools.map((t) => t.name)).toContain("audit_trail");
  });

  it("calls HTTP and remote MCP connector tools through the SDK client", async () => {
    const client = await connect(`/projects/${w.projectId}/mcp`, w.developer);
    const echo = await client.callTool({ name: "upstream__echo", arguments: { text: "through mcp" } });
    expect(echo.content).toEqual([{ type: "text", text: "echo: through mcp" }]);
    const before = api.seen.length;
    const account = await client.callTool({ name: "commerce__getAccount", arguments: { accountId: "acc-1" } });
    expect(account.structuredContent).toMatchObject({ id: "acc-1" });
    expect(api.seen[before]?.authorization).toBe(`Bearer ${API_TOKEN}`);
    const bad = await client.callTool({ name: "commerce__getAccount", arguments: {} });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain("/arguments/accountId");
    const denied = await client.callTool({ name: "commerce__deleteAccount", arguments: { accountId: "acc-1" } });
    expect(denied.isError).toBe(true);
    expect(JSON.stringify(denied.content)).toContain(DENY_RULE);
    await expect(client.callTool({ name: "commerce__nope", arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it("needs connectors:call to call a connector tool, as REST does: a viewer lists tools but cannot call them", async () => {
    const client = await connect(`/projects/${w.projectId}/mcp`, w.viewer);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("commerce__getAccount");
    const before = api.seen.length;
    const result = await client.callTool({ name: "commerce__getAccount", arguments: { accountId: "acc-1" } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("connectors:call");
    expect(api.seen.length).toBe(before);
  });

  it("announces list changes after a visibility change, and hides the tool", async () => {
    const client = await connect(`/projects/${w.projectId}/mcp`, w.developer);
    const changed = new Promise<void>((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve());
    });
    // The standalone SSE stream opens right after initialization, without the client waiting for it.
    await vi.waitFor(() => expect(listening.has(client)).toBe(true));
    const res = await w.call(
      "PUT",
      `/v1/mcp-servers/${await connectorId("commerce")}/entries/listAccounts/visibility`,
      w.owner,
      {
        visibility: "hidden",
      },
    );
    expect(res.status).toBe(200);
    await changed;
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).not.toContain("commerce__listAccounts");
    await expect(client.callTool({ name: "commerce__listAccounts", arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it("serves the organization endpoint with org tools and connector tools namespaced by project", async () => {
    const client = await connect(`/mcp?orgId=${w.orgId}`, w.owner);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["projects_list", "members_list"]));
    expect(names.some((n) => /^[\w-]+__upstream__echo$/.test(n))).toBe(true);
  });

  it("answers 401 with the resource metadata without an identity, and 404 for another organization's project", async () => {
    const res = await w.service.fetch(
      new Request(`http://connections.test/projects/${w.projectId}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    );
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("resource_metadata=");
    await expect(connect(`/projects/${w.projectId}/mcp`, w.outsider)).rejects.toThrow(/404/);
  });

  async function connectorId(name: string): Promise<string> {
    const list = (await (await w.call("GET", `/v1/projects/${w.projectId}/mcp-servers`, w.owner)).json()) as {
      items: Array<{ id: string; name: string }>;
    };
    const found = list.items.find((c) => c.name === name);
    if (!found) throw new Error(`no connector ${name}`);
    return found.id;
  }
});
