// Every outbound call a tenant aims is answered within a bound, and a failure on the far side is the
// same problem whenever it happens: at creation (discovery) or at a tool call, for MCP servers and
// HTTP connectors alike. 504 when the server does not answer in time, 502 when it cannot be reached.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { countRows } from "@agentplane/db";
import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { API_TOKEN, answerAddToolMcp } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
const TIMEOUT_MS = 500;
/** The bound: the fetcher's timeout, a connect and a call each at most, plus slack for a loaded machine. */
const ANSWERED_WITHIN_MS = 2 * TIMEOUT_MS + 3000;

const SPEC = {
  openapi: "3.0.3",
  info: { title: "slow", version: "1" },
  paths: { "/slow": { get: { operationId: "slow", responses: { "200": { description: "ok" } } } } },
};

/** An MCP server with one tool (`add`) that, once `hang` is set, accepts requests and never answers. */
async function startHangableMcp(): Promise<LocalServer & { hang: boolean }> {
  const state = { hang: false };
  const server = await startLocalServer(async (req, res) => {
    if (state.hang) return;
    await answerAddToolMcp("hangable", req, res);
  });
  return Object.defineProperty(server, "hang", {
    get: () => state.hang,
    set: (hang: boolean) => {
      state.hang = hang;
    },
  }) as LocalServer & { hang: boolean };
}

describe.skipIf(!pg.available)(`a connector's upstream that fails is answered in time${pg.reason}`, () => {
  let w: World;
  let hanging: Server;
  let hangingUrl = "";
  let closedUrl = "";

  beforeAll(async () => {
    w = await startWorld("connectors_upstream_failures", { fetcher: { timeoutMs: TIMEOUT_MS } });
    // Accepts the request and never answers.
    hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    // A port nothing listens on: the connection is refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
  }, 120_000);
  afterAll(async () => {
    hanging?.closeAllConnections();
    hanging?.close();
    await w?.close();
  });

  const timed = async (method: string, path: string, body: unknown) => {
    const started = Date.now();
    const res = await w.call(method, path, method === "POST" && path.endsWith("/call") ? w.developer : w.owner, body);
    const text = await res.text();
    return {
      status: res.status,
      elapsed: Date.now() - started,
      text,
      body: JSON.parse(text) as Record<string, unknown>,
    };
  };
  const connectors = () =>
    countRows(w.service.context.db.selectFrom("connectors").where("project_id", "=", w.projectId));

  const httpConnector = async (name: string, baseUrl: string): Promise<string> => {
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name,
      spec: SPEC,
      baseUrl,
      credentialId: w.credentialId,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const callSlow = (id: string) => timed("POST", `/v1/mcp-servers/${id}/tools/call`, { name: "slow", arguments: {} });

  it("an HTTP API that never answers a call is a 504 naming the timeout, within the bound", async () => {
    const answer = await callSlow(await httpConnector("hanging", hangingUrl));
    expect(answer.status, answer.text).toBe(504);
    expect(answer.body).toMatchObject({ reason: "timeout", detail: expect.stringContaining("Connector hanging") });
    expect(answer.elapsed).toBeLessThan(ANSWERED_WITHIN_MS);
    expect(answer.text).not.toContain(API_TOKEN);
  });

  it("an HTTP API that refuses the connection is a 502 naming the cause", async () => {
    const answer = await callSlow(await httpConnector("closed", closedUrl));
    expect(answer.status, answer.text).toBe(502);
    expect(answer.body).toMatchObject({ reason: "unreachable", detail: expect.stringContaining("refused") });
    expect(answer.text).not.toContain(API_TOKEN);
    await vi.waitFor(() => {
      const audited = w.audit.filter((r) => r.action === "connector.tool_called" && r.outcome === "error");
      expect(audited.map((r) => r.details?.error)).toEqual(expect.arrayContaining(["timeout", "unreachable"]));
    });
  });

  it("creating a connector whose source never answers is the same 504; one that refuses, a 502", async () => {
    const before = await connectors();
    const sources = [
      { path: "mcp-servers", body: { name: "mcp-hanging", url: `${hangingUrl}/mcp` }, expected: [504, "timeout"] },
      { path: "mcp-servers", body: { name: "mcp-closed", url: `${closedUrl}/mcp` }, expected: [502, "unreachable"] },
      {
        path: "mcp-servers/http",
        body: { name: "spec-hanging", specUrl: `${hangingUrl}/openapi.json` },
        expected: [504, "timeout"],
      },
      {
        path: "mcp-servers/http",
        body: { name: "spec-closed", specUrl: `${closedUrl}/openapi.json` },
        expected: [502, "unreachable"],
      },
    ] as const;
    for (const { path, body, expected } of sources) {
      const answer = await timed("POST", `/v1/projects/${w.projectId}/${path}`, body);
      expect([answer.status, answer.body.reason], `${body.name}: ${answer.text}`).toEqual(expected);
      expect(answer.body.detail).toMatch(expected[0] === 504 ? /did not answer in time/ : /refused/);
      expect(answer.elapsed, body.name).toBeLessThan(ANSWERED_WITHIN_MS);
      // The preview of the same source answers the same.
      const preview = await timed("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, {
        ...("url" in body ? { url: body.url } : { specUrl: body.specUrl }),
      });
      expect([preview.status, preview.body.reason], `${body.name} preview`).toEqual(expected);
    }
    // Nothing was created for a source that gave no tools.
    expect(await connectors()).toBe(before);
  });

  it("an MCP server that hangs or goes away after creation: its calls are the same 504 and 502", async () => {
    const mcp = await startHangableMcp();
    try {
      const created = await timed("POST", `/v1/projects/${w.projectId}/mcp-servers`, {
        name: "mcp-later",
        url: `${mcp.url}/mcp`,
      });
      expect(created.status, created.text).toBe(201);
      const id = created.body.id as string;
      const add = () => timed("POST", `/v1/mcp-servers/${id}/tools/call`, { name: "add", arguments: { a: 1, b: 2 } });
      expect((await add()).status).toBe(200);

      mcp.hang = true;
      const hung = await add();
      expect([hung.status, hung.body.reason], hung.text).toEqual([504, "timeout"]);
      expect(hung.body.detail).toContain("Connector mcp-later did not answer in time");
      expect(hung.elapsed).toBeLessThan(ANSWERED_WITHIN_MS);
      // Re-discovery meets the same hang: the same 504, and the connector shows it.
      const again = await timed("POST", `/v1/mcp-servers/${id}/discover/url`, undefined);
      expect([again.status, again.body.reason], again.text).toEqual([504, "timeout"]);
      const got = await timed("GET", `/v1/mcp-servers/${id}`, undefined);
      expect(got.body).toMatchObject({ status: "error", lastError: expect.stringContaining("did not answer in time") });
    } finally {
      await mcp.close();
    }
    const gone = await timed("POST", `/v1/mcp-servers/${(await mcpId(w, "mcp-later")) ?? ""}/tools/call`, {
      name: "add",
      arguments: { a: 1, b: 2 },
    });
    expect([gone.status, gone.body.reason], gone.text).toEqual([502, "unreachable"]);
    expect(gone.body.detail).toMatch(/could not be reached: .*refused/);
  });
});

async function mcpId(w: World, name: string): Promise<string | undefined> {
  const row = await w.service.context.db
    .selectFrom("connectors")
    .select("id")
    .where("project_id", "=", w.projectId)
    .where("name", "=", name)
    .executeTakeFirst();
  return row?.id;
}
