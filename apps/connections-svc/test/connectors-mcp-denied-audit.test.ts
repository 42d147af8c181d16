// A tool call refused through the platform's MCP endpoint answers 200 with an error result
// inside, so the refusal has to be recorded by the service: the gateway sees only a 200.
import type { Principal } from "@agentplane/contracts";
import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMcpUpstream } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`a refused MCP tool call${pg.reason}`, () => {
  let w: World;
  let mcp: Awaited<ReturnType<typeof startMcpUpstream>>;
  let connectorId = "";

  beforeAll(async () => {
    [w, mcp] = await Promise.all([startWorld("connectors_mcp_denied_audit"), startMcpUpstream()]);
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "upstream",
      url: mcp.url,
    });
    expect(res.status).toBe(201);
    connectorId = ((await res.json()) as { id: string }).id;
  }, 120_000);
  afterAll(async () => {
    await w?.close();
    await mcp?.close();
  });

  async function post(path: string, as: Principal | undefined, body: string, headers: Record<string, string> = {}) {
    const h = new Headers({ "content-type": "application/json", accept: "application/json, text/event-stream" });
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    if (as) h.set("x-agentplane-identity", await signIdentity(w.tenancy.keys, as, { audience: "connections" }));
    const res = await w.service.fetch(
      new Request(`http://connections.test${path}`, { method: "POST", headers: h, body }),
    );
    return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
  }
  const rpc = (method: string, params: unknown = {}, id: number | string = 1) =>
    JSON.stringify({ jsonrpc: "2.0", id, method, params });

  it("records a connector tool call the caller's role refuses, as REST's 403 is", async () => {
    const before = w.audit.length;
    const res = await post(
      `/projects/${w.projectId}/mcp`,
      w.viewer,
      rpc("tools/call", { name: "upstream__echo", arguments: { text: "x" } }),
    );
    expect(res.status).toBe(200);
    expect(res.text).toContain("connectors:call");
    expect(mcp.calls).toEqual([]);
    await vi.waitFor(() =>
      expect(w.audit.slice(before)).toContainEqual(
        expect.objectContaining({
          action: "connector.tool_called",
          outcome: "denied",
          targetId: connectorId,
          details: expect.objectContaining({ tool: "echo", permission: "connectors:call" }),
        }),
      ),
    );
  });

  it("records a platform tool call the service behind it refuses (an internal call no gateway records)", async () => {
    // A token of the developer that may only see the organization, not list its members.
    const token: Principal = {
      type: "api_token",
      id: "tok_scoped",
      userId: w.developer.id,
      role: "member",
      scopes: ["org:read"],
    };
    const before = w.audit.length;
    const res = await post(`/mcp?orgId=${w.orgId}`, token, rpc("tools/call", { name: "members_list", arguments: {} }));
    expect(res.status).toBe(200);
    expect(res.text).toContain('"isError":true');
    await vi.waitFor(() =>
      expect(w.audit.slice(before)).toContainEqual(
        expect.objectContaining({
          action: "mcp.tool_called",
          outcome: "denied",
          targetId: w.orgId,
          details: expect.objectContaining({ tool: "members_list", status: 403 }),
        }),
      ),
    );
  });
});
