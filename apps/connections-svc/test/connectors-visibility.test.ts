import type { Principal } from "@agentplane/contracts";
import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcessMcpClient } from "./connectors-fixtures/in-process-client.ts";
import { type ApiUpstream, startApiUpstream } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
type Json = Record<string, unknown>;

describe.skipIf(!pg.available)(`tools restricted to teams${pg.reason}`, () => {
  let w: World;
  let api: ApiUpstream;
  let connectorId: string;
  const clients: Client[] = [];

  const toolNames = async (as: Principal) => {
    const res = await w.call("GET", `/v1/mcp-servers/${connectorId}/tools`, as);
    expect(res.status).toBe(200);
    return ((await res.json()) as { items: Array<{ name: string }> }).items.map((t) => t.name);
  };
  const callGetAccount = (as: Principal) =>
    w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, as, {
      name: "getAccount",
      arguments: { accountId: "acc-1" },
    });
  const mcpClient = async (as: Principal) => {
    const client = await inProcessMcpClient(
      `http://connections.test/projects/${w.projectId}/mcp`,
      () => signIdentity(w.tenancy.keys, as, { audience: "connections" }),
      (request) => w.service.fetch(request),
    );
    clients.push(client);
    return client;
  };
  const restrict = async (teams?: string[]) => {
    const res = await w.call("PUT", `/v1/mcp-servers/${connectorId}/entries/getAccount/visibility`, w.owner, {
      visibility: "visible",
      ...(teams ? { teams } : {}),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Json;
  };

  beforeAll(async () => {
    [w, api] = await Promise.all([startWorld("connectors_visibility"), startApiUpstream()]);
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "commerce",
      specUrl: `${api.url}/openapi.json`,
      credentialId: w.credentialId,
      include: { tags: ["Account"] },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    connectorId = ((await res.json()) as { id: string }).id;
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await w?.close();
    await api?.close();
  });

  it("shows and runs a team's tool for its members only, through REST and MCP", async () => {
    // Both are project developers through a team grant; only teamMember is in `builders`.
    expect(await toolNames(w.developer)).toContain("getAccount");
    expect(await restrict([w.teamId])).toMatchObject({ entryName: "getAccount", teams: [w.teamId] });

    expect(await toolNames(w.teamMember)).toContain("getAccount");
    expect(await toolNames(w.developer)).not.toContain("getAccount");
    expect(await toolNames(w.developer)).toContain("listAccounts");
    const managed = (await (await w.call("GET", `/v1/mcp-servers/${connectorId}/tools`, w.owner)).json()) as {
      items: Array<{ name: string; teams?: string[] }>;
    };
    expect(managed.items.find((t) => t.name === "getAccount")?.teams).toEqual([w.teamId]);

    const allowed = await callGetAccount(w.teamMember);
    expect(allowed.status, await allowed.clone().text()).toBe(200);
    expect(((await allowed.json()) as { structuredContent: Json }).structuredContent).toMatchObject({ id: "acc-1" });
    expect((await callGetAccount(w.developer)).status).toBe(404);

    const member = await mcpClient(w.teamMember);
    const outsider = await mcpClient(w.developer);
    expect((await member.listTools()).tools.map((t) => t.name)).toContain("commerce__getAccount");
    expect((await outsider.listTools()).tools.map((t) => t.name)).not.toContain("commerce__getAccount");
    const viaMcp = await member.callTool({ name: "commerce__getAccount", arguments: { accountId: "acc-1" } });
    expect(viaMcp.isError).toBeFalsy();
    await expect(
      outsider.callTool({ name: "commerce__getAccount", arguments: { accountId: "acc-1" } }),
    ).rejects.toThrow(/Unknown tool/);
  });

  it("refuses team ids that are not teams of the connector's organization with a 400 naming each", async () => {
    const path = `/v1/mcp-servers/${connectorId}/entries/getAccount/visibility`;
    const before = (await (await w.call("GET", `/v1/mcp-servers/${connectorId}/tools`, w.owner)).json()) as {
      items: Array<{ name: string; teams?: string[] }>;
    };
    const res = await w.call("PUT", path, w.owner, {
      visibility: "visible",
      teams: [w.teamId, "team_00000000000000000000000000", w.otherTeamId, w.projectId],
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await res.json()) as { errors: Array<{ pointer: string; message: string }> };
    expect(problem.errors.map((e) => e.pointer)).toEqual(["/body/teams/1", "/body/teams/2", "/body/teams/3"]);
    expect(problem.errors[1]?.message).toContain(w.otherTeamId);
    // Nothing was changed.
    const after = (await (await w.call("GET", `/v1/mcp-servers/${connectorId}/tools`, w.owner)).json()) as {
      items: Array<{ name: string; teams?: string[] }>;
    };
    expect(after.items.find((t) => t.name === "getAccount")).toEqual(before.items.find((t) => t.name === "getAccount"));
  });

  it("a change of the restriction applies to the next request on this replica", async () => {
    await restrict([w.teamId]);
    expect((await callGetAccount(w.developer)).status).toBe(404);
    await restrict();
    expect((await callGetAccount(w.developer)).status).toBe(200);
    expect(await toolNames(w.developer)).toContain("getAccount");
    await restrict([w.teamId]);
    expect((await callGetAccount(w.developer)).status).toBe(404);
    expect(await toolNames(w.developer)).not.toContain("getAccount");
  });
});
