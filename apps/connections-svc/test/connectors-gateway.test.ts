import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { silentLogger } from "@agentplane/service-kit";
import { discoverOAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { checkResourceAllowed } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../../api-gateway/test/harness.ts";
import { type ConnectionsService, createConnectionsService } from "../src/app.ts";
import { startMcpUpstream } from "./connectors-fixtures/upstreams.ts";

const run = promisify(execFile);
/** The MCP Inspector's launcher script (its `mcp-inspector` binary), run with this process's Node. */
const INSPECTOR = join(
  dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector/package.json")),
  "clients/launcher/build/index.js",
);

describe("MCP endpoints behind the gateway's Bearer authentication", () => {
  let h: Harness;
  let connections: ConnectionsService;
  let mcp: Awaited<ReturnType<typeof startMcpUpstream>>;
  let projectId: string;
  const auth = () => ({ authorization: `Bearer ${h.ownerToken}` });

  beforeAll(async () => {
    mcp = await startMcpUpstream();
    h = await startHarness({
      extraTargets: { connections: { fetch: async (request) => connections.fetch(request), ready: async () => true } },
    });
    connections = await createConnectionsService({
      database: h.database,
      bus: h.bus,
      keys: h.keys,
      logger: silentLogger(),
      authorizer: h.tenancy.authorizer,
      signer: { sign: async () => "unused" },
      config: { connectors: { allowedHosts: ["127.0.0.1"], scheduler: false } },
    });
    const me = (await (await fetch(`${h.url}/v1/auth/me`, { headers: auth() })).json()) as {
      organizations: Array<{ id: string }>;
    };
    const orgId = me.organizations[0]?.id;
    const project = await fetch(`${h.url}/v1/orgs/${orgId}/projects`, {
      method: "POST",
      headers: { ...auth(), "content-type": "application/json" },
      body: JSON.stringify({ name: "gw" }),
    });
    projectId = ((await project.json()) as { id: string }).id;
    const created = await fetch(`${h.url}/v1/projects/${projectId}/mcp-servers`, {
      method: "POST",
      headers: { ...auth(), "content-type": "application/json" },
      body: JSON.stringify({ name: "upstream", url: mcp.url }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await connections?.close();
    await h?.close();
    await mcp?.close();
  });

  it("lists and calls tools with the SDK client over real HTTP with a Bearer token", async () => {
    const client = new Client({ name: "gw-client", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${h.url}/projects/${projectId}/mcp`), {
        requestInit: { headers: auth() },
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["upstream__echo", "sandboxes_list", "audit_trail"]));
      const result = await client.callTool({ name: "upstream__add", arguments: { a: 2, b: 3 } });
      expect(result.content).toEqual([{ type: "text", text: "5" }]);
    } finally {
      await client.close();
    }
  });

  it("the MCP Inspector CLI lists and calls tools with the Bearer token in a header", async () => {
    const inspector = async (...args: string[]) => {
      const { stdout } = await run(
        process.execPath,
        [
          INSPECTOR,
          "--cli",
          `${h.url}/projects/${projectId}/mcp`,
          "--transport",
          "http",
          "--header",
          `Authorization: Bearer ${h.ownerToken}`,
          ...args,
        ],
        { timeout: 60_000, env: { ...process.env, MCP_CATALOG_PATH: join(tmpdir(), `inspector-${process.pid}.json`) } },
      );
      return JSON.parse(stdout) as Record<string, unknown>;
    };
    const listed = (await inspector("--method", "tools/list")) as { tools: Array<{ name: string }> };
    expect(listed.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["upstream__echo", "upstream__add", "sandboxes_list"]),
    );
    const called = await inspector(
      "--method",
      "tools/call",
      "--tool-name",
      "upstream__add",
      "--tool-arg",
      "a=2",
      "b=40",
    );
    expect(called.content).toEqual([{ type: "text", text: "42" }]);
    // Without the header the endpoint answers 401, and the CLI fails.
    await expect(
      run(
        process.execPath,
        [INSPECTOR, "--cli", `${h.url}/projects/${projectId}/mcp`, "--transport", "http", "--method", "tools/list"],
        {
          timeout: 60_000,
        },
      ),
    ).rejects.toThrow();
  }, 180_000);

  it("answers 401 with WWW-Authenticate resource metadata, which the gateway serves", async () => {
    const res = await fetch(`${h.url}/projects/${projectId}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get("www-authenticate") ?? "";
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).toBe(`${h.url}/.well-known/oauth-protected-resource/projects/${projectId}/mcp`);
    // The SDK's own discovery finds the endpoint's metadata and accepts its resource for the URL.
    for (const path of [`/projects/${projectId}/mcp`, "/mcp"]) {
      const metadata = await discoverOAuthProtectedResourceMetadata(`${h.url}${path}`);
      expect(metadata).toEqual(
        expect.objectContaining({ resource: `${h.url}${path}`, bearer_methods_supported: ["header"] }),
      );
      expect(
        checkResourceAllowed({ requestedResource: `${h.url}${path}`, configuredResource: metadata.resource }),
      ).toBe(true);
    }
    const root = (await (await fetch(`${h.url}/.well-known/oauth-protected-resource`)).json()) as { resource: string };
    expect(root.resource).toBe(h.url);
    // Only the MCP endpoints are resources with metadata of their own.
    for (const path of ["/.well-known/oauth-protected-resourcex", "/.well-known/oauth-protected-resource/v1/orgs"]) {
      expect((await fetch(`${h.url}${path}`)).status, path).toBe(404);
    }
    const bad = await fetch(`${h.url}/mcp`, { method: "POST", headers: { authorization: "Bearer nope" } });
    expect(bad.status).toBe(401);
  });
});
