import { type LocalServer, readBody, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { API_TOKEN } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

// A remote MCP connector keeps a connected client between calls; a credential rotated in governance
// reaches the MCP server as soon as it reaches an HTTP connector, not when the pooled client expires.

const pg = await requirePostgres();
const ROTATED = "sk-upstream-rotated-41c2";

/** A stateless Streamable HTTP MCP server with one tool, `ping`, noting the Authorization of each POST. */
async function startRecordingMcp(): Promise<LocalServer & { authorizations: string[] }> {
  const authorizations: string[] = [];
  const server = await startLocalServer(async (req, res) => {
    authorizations.push(String(req.headers.authorization ?? ""));
    const mcp = new McpServer({ name: "recording", version: "1.0.0" });
    mcp.registerTool("ping", { description: "Answers pong", inputSchema: { n: z.number() } }, async ({ n }) => ({
      content: [{ type: "text", text: `pong ${n}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(await readBody(req)));
  });
  return Object.assign(server, { authorizations });
}

describe.skipIf(!pg.available)(`a rotated credential of a remote MCP connector${pg.reason}`, () => {
  let w: World;
  let mcp: Awaited<ReturnType<typeof startRecordingMcp>>;
  let connectorId: string;

  beforeAll(async () => {
    [w, mcp] = await Promise.all([startWorld("connectors_mcp_rotation"), startRecordingMcp()]);
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "recording",
      url: mcp.url,
      credentialId: w.credentialId,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    connectorId = ((await res.json()) as { id: string }).id;
  }, 120_000);
  afterAll(async () => {
    await w?.close();
    await mcp?.close();
  });

  const ping = async (n: number) => {
    const res = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "ping",
      arguments: { n },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { content: Array<{ text: string }> }).content[0]?.text;
  };

  it("sends the new secret on the next calls once governance has it", async () => {
    expect(await ping(1)).toBe("pong 1");
    expect(mcp.authorizations.at(-1)).toBe(`Bearer ${API_TOKEN}`);

    const rotated = await w.governance.call(
      "PATCH",
      `/v1/projects/${w.projectId}/credentials/${w.credentialId}`,
      w.owner,
      { token: ROTATED },
    );
    expect(rotated.status, await rotated.clone().text()).toBe(200);

    // The connectors' read of a credential is kept a few seconds; well within 15 s the new one is sent.
    const end = Date.now() + 15_000;
    let n = 2;
    while (Date.now() < end && mcp.authorizations.at(-1) !== `Bearer ${ROTATED}`) {
      expect(await ping(n)).toBe(`pong ${n}`);
      n++;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(mcp.authorizations.at(-1)).toBe(`Bearer ${ROTATED}`);
    // And from then on, only the new one.
    const from = mcp.authorizations.length;
    expect(await ping(n)).toBe(`pong ${n}`);
    expect(new Set(mcp.authorizations.slice(from))).toEqual(new Set([`Bearer ${ROTATED}`]));
  }, 60_000);
});
