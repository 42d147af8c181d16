import { readFileSync } from "node:fs";
import { requirePostgres } from "@agentplane/testkit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONNECTIONS_SCHEMA } from "../src/app.ts";
import { API_TOKEN, type ApiUpstream, startApiUpstream, startMcpUpstream } from "./connectors-fixtures/upstreams.ts";
import { DENY_RULE, startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
type Json = Record<string, unknown>;
const body = async <T = Json>(res: Response) => (await res.json()) as T;

describe.skipIf(!pg.available)(`connector routes${pg.reason}`, () => {
  let w: World;
  let api: ApiUpstream;
  let mcp: Awaited<ReturnType<typeof startMcpUpstream>>;
  let http: { id: string; version: number; toolCount: number };

  beforeAll(async () => {
    [w, api, mcp] = await Promise.all([startWorld("connectors_routes"), startApiUpstream(), startMcpUpstream()]);
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "commerce",
      specUrl: `${api.url}/openapi.json`,
      credentialId: w.credentialId,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    http = await body(res);
  }, 120_000);
  afterAll(async () => {
    await w?.close();
    await api?.close();
    await mcp?.close();
  });

  it("builds an HTTP connector from a served description: 320 tools, base URL from servers[0], no secrets", async () => {
    expect(http).toMatchObject({
      kind: "http",
      status: "ready",
      toolCount: 320,
      version: 1,
      baseUrl: api.url,
      credentialId: w.credentialId,
    });
    const tools = await body<{ items: Array<{ name: string; inputSchema: Json }> }>(
      await w.call("GET", `/v1/mcp-servers/${http.id}/tools`, w.owner),
    );
    expect(tools.items).toHaveLength(320);
    expect(tools.items.find((t) => t.name === "getAccount")?.inputSchema).toMatchObject({ required: ["accountId"] });
    const status = await body(await w.call("GET", `/v1/mcp-servers/${http.id}/status`, w.viewer));
    expect(status).toMatchObject({ status: "ready", toolCount: 320, pendingSpecs: 0 });
    const list = await body<{ items: Json[] }>(
      await w.call("GET", `/v1/projects/${w.projectId}/mcp-servers`, w.viewer),
    );
    expect(JSON.stringify(list)).not.toContain(API_TOKEN);
  });

  it("calls operations with the credential injected, answering MCP-style results", async () => {
    const before = api.seen.length;
    const res = await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, {
      name: "getAccount",
      arguments: { accountId: "acc-1" },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const result = await body<{ content: Array<{ text: string }>; structuredContent: Json; isError?: boolean }>(res);
    expect(result.structuredContent).toMatchObject({ id: "acc-1", name: "First" });
    expect(result.isError).toBeUndefined();
    expect(api.seen[before]).toMatchObject({
      method: "GET",
      path: "/accounts/acc-1",
      authorization: `Bearer ${API_TOKEN}`,
    });

    const created = await body<{ structuredContent: Json }>(
      await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, {
        name: "createAccount",
        arguments: { name: "Second", amount: 12.5, "X-Request-Id": "ignored-by-body" },
      }),
    );
    expect(created.structuredContent).toMatchObject({ name: "Second", amount: 12.5 });
    expect(JSON.parse(api.seen.at(-1)?.body ?? "{}")).toEqual({ name: "Second", amount: 12.5 });

    const missing = await body<{ isError: boolean; content: Array<{ text: string }> }>(
      await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, {
        name: "getAccount",
        arguments: { accountId: "nope" },
      }),
    );
    expect(missing.isError).toBe(true);
    expect(missing.content[0]?.text).toMatch(/^HTTP 404/);
  });

  it("answers 400 with JSON pointers for bad arguments and 404 for unknown tools", async () => {
    const bad = await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, {
      name: "listAccounts",
      arguments: { limit: 500, status: "active" },
    });
    expect(bad.status).toBe(400);
    const problem = await body<{ errors: Array<{ pointer: string }> }>(bad);
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual(["/body/arguments/limit", "/body/arguments/status"]);
    const required = await body<{ errors: Array<{ pointer: string }> }>(
      await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, { name: "getAccount", arguments: {} }),
    );
    expect(required.errors[0]?.pointer).toBe("/body/arguments/accountId");
    const unknown = await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, {
      name: "nope",
      arguments: {},
    });
    expect(unknown.status).toBe(404);
  });

  it("denies a tool by policy with the rule id, and audits calls without argument values", async () => {
    const denied = await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, {
      name: "deleteAccount",
      arguments: { accountId: "acc-secret-value-91" },
    });
    expect(denied.status).toBe(403);
    expect(await body(denied)).toMatchObject({ ruleId: DENY_RULE, action: "tool:call" });
    expect(api.seen.some((s) => s.path.includes("acc-secret-value-91"))).toBe(false);
    await w.service.context.outbox.flush();
    await expect
      .poll(() => w.audit.filter((a) => a.action === "connector.tool_called").length)
      .toBeGreaterThanOrEqual(4);
    const calls = w.audit.filter((a) => a.action === "connector.tool_called");
    expect(calls.find((a) => a.outcome === "denied")?.details).toMatchObject({
      tool: "deleteAccount",
      decision: "deny",
      ruleId: DENY_RULE,
      argumentNames: ["accountId"],
    });
    expect(calls.find((a) => a.details?.tool === "getAccount" && a.outcome === "success")?.details).toMatchObject({
      status: 200,
    });
    const everything = JSON.stringify(w.audit);
    expect(everything).not.toContain("acc-secret-value-91");
    expect(everything).not.toContain("acc-1");
    expect(everything).not.toContain(API_TOKEN);
  });

  it("answers concurrent calls only once their audit records are committed (written together)", async () => {
    // A record is in the outbox table until the relay has handed it to the bus (w.audit).
    const committed = async () => {
      type Audited = { action?: string; details?: { tool?: string } };
      const rows = await sql<{ id: string; data: Audited | string }>`
        select id, data from ${sql.table(`${CONNECTIONS_SCHEMA}.event_outbox`)}`.execute(w.service.context.db);
      const ids = new Set(w.audit.filter((a) => a.details?.tool === "listAccounts").map((a) => a.id));
      for (const { id, data } of rows.rows) {
        const record = (typeof data === "string" ? JSON.parse(data) : data) as Audited;
        if (record.action === "connector.tool_called" && record.details?.tool === "listAccounts") ids.add(id);
      }
      return ids.size;
    };
    const before = await committed();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, { name: "listAccounts", arguments: {} }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await committed()).toBe(before + 20);
  });

  it("previews an inline description without saving, and refuses bad input", async () => {
    const count = async () =>
      (await body<{ items: Json[] }>(await w.call("GET", `/v1/projects/${w.projectId}/mcp-servers`, w.owner))).items
        .length;
    const before = await count();
    const yaml = readFileSync(new URL("./connectors-fixtures/pets-3.0.yaml", import.meta.url), "utf8");
    const preview = await body<{ tools: Json[]; warnings: Json[]; baseUrl: string }>(
      await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, { spec: yaml }),
    );
    expect(preview.tools).toHaveLength(6);
    expect(preview.warnings).toEqual([expect.objectContaining({ operationId: "uploadPetPhoto" })]);
    expect(preview.baseUrl).toBe("https://eu.pets.example.test/api");
    expect(JSON.stringify(preview.tools)).not.toContain('"operation"');
    expect(await count()).toBe(before);

    const invalid = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, {
      spec: { openapi: "3.0.3", info: { title: "x" }, paths: {} },
    });
    expect(invalid.status).toBe(400);
    expect((await body<{ errors: Array<{ message: string }> }>(invalid)).errors[0]?.message).toContain("version");
    const blocked = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, {
      specUrl: "http://169.254.169.254/latest/meta-data/",
    });
    expect(blocked.status).toBe(422);
    expect(await body(blocked)).toMatchObject({ reason: "blocked-address" });
    const gone = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, {
      specUrl: `${api.url}/missing.json`,
    });
    // The description host answers 401 without its credential: a failure of the far side (502),
    // the status its reason.
    expect(await body(gone)).toMatchObject({ status: 502, reason: "http-401" });
    const both = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, { name: "x" });
    expect(both.status).toBe(400);
    const ambiguous = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "a__b",
      url: "https://mcp.example.test/mcp",
    });
    expect(ambiguous.status).toBe(400);
    expect(((await ambiguous.json()) as { errors: Array<{ pointer: string }> }).errors[0]?.pointer).toBe("/body/name");
  });

  it("refuses a base URL no tool call could reach: given, from servers[0] or patched, it is a 400", async () => {
    const count = async () =>
      (await body<{ items: Json[] }>(await w.call("GET", `/v1/projects/${w.projectId}/mcp-servers`, w.owner))).items
        .length;
    const before = await count();
    const spec = (servers?: Array<{ url: string }>) => ({
      openapi: "3.0.3",
      info: { title: "internal", version: "1" },
      ...(servers ? { servers } : {}),
      paths: { "/a": { get: { operationId: "getA", responses: { "200": { description: "ok" } } } } },
    });
    const refusals: Array<[Json, string]> = [
      [{ spec: spec(), baseUrl: "http://169.254.169.254/latest" }, "/body/baseUrl"],
      [{ spec: spec(), baseUrl: "http://[::ffff:127.0.0.2]:8080/" }, "/body/baseUrl"],
      [{ spec: spec([{ url: "http://2130706434/" }]) }, "/body/spec"],
      [{ spec: spec([{ url: "http://[::]/" }]) }, "/body/spec"],
    ];
    for (const [input, pointer] of refusals) {
      const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
        name: `internal-${refusals.findIndex(([i]) => i === input)}`,
        ...input,
      });
      expect(created.status, JSON.stringify(input)).toBe(400);
      expect((await body<{ errors: Array<{ pointer: string }> }>(created)).errors[0]?.pointer).toBe(pointer);
      const previewed = await w.call(
        "POST",
        `/v1/projects/${w.projectId}/mcp-servers/discover/preview`,
        w.owner,
        input,
      );
      expect(previewed.status, JSON.stringify(input)).toBe(400);
    }
    expect(await count()).toBe(before);
    const patched = await w.call("PATCH", `/v1/mcp-servers/${http.id}`, w.owner, { baseUrl: "http://0.0.0.0:9/" });
    expect(patched.status).toBe(400);
    const connector = await body<{ baseUrl: string }>(await w.call("GET", `/v1/mcp-servers/${http.id}`, w.owner));
    expect(connector.baseUrl).toBe(api.url);
  });

  it("connects a remote MCP server built with the SDK and calls its tools through REST", async () => {
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "upstream",
      url: mcp.url,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const connector = await body<{ id: string; toolCount: number; kind: string }>(res);
    expect(connector).toMatchObject({ kind: "mcp", toolCount: 2 });
    const preview = await body<{ tools: Array<{ name: string }> }>(
      await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, { url: mcp.url }),
    );
    expect(preview.tools.map((t) => t.name)).toEqual(["add", "echo"]);
    const result = await body<{ content: Array<{ text: string }> }>(
      await w.call("POST", `/v1/mcp-servers/${connector.id}/tools/call`, w.developer, {
        name: "echo",
        arguments: { text: "hi" },
      }),
    );
    expect(result.content[0]?.text).toBe("echo: hi");
    const bad = await w.call("POST", `/v1/mcp-servers/${connector.id}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: "1" },
    });
    expect(bad.status).toBe(400);
    const dup = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "upstream",
      url: mcp.url,
    });
    expect(dup.status).toBe(409);
  });

  it("stores a changed description as a pending spec, diffs it, promotes it and keeps visibility", async () => {
    const hide = await w.call("PUT", `/v1/mcp-servers/${http.id}/entries/listAccounts/visibility`, w.owner, {
      visibility: "hidden",
    });
    expect(hide.status).toBe(200);
    const hidden = await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, {
      name: "listAccounts",
      arguments: {},
    });
    expect(hidden.status).toBe(404);

    const unchanged = await body(await w.call("POST", `/v1/mcp-servers/${http.id}/discover/url`, w.owner));
    expect(unchanged).toEqual({ changed: false });

    api.revision = 1;
    const first = await body<{ changed: boolean; pendingSpec: { id: string; baseVersion: number } }>(
      await w.call("POST", `/v1/mcp-servers/${http.id}/discover/url`, w.owner),
    );
    expect(first).toMatchObject({ changed: true, pendingSpec: { baseVersion: 1 } });
    expect(await body(await w.call("POST", `/v1/mcp-servers/${http.id}/discover/url`, w.owner))).toEqual({
      changed: false,
    });
    const pending = await body<{ items: Json[] }>(
      await w.call("GET", `/v1/mcp-servers/${http.id}/specs/pending`, w.viewer),
    );
    expect(pending.items).toHaveLength(1);

    const diff = await body<{
      added: string[];
      removed: string[];
      changed: Array<{ name: string; schemaChanges: Array<{ pointer: string }> }>;
    }>(await w.call("GET", `/v1/mcp-servers/${http.id}/specs/pending/${first.pendingSpec.id}/diff`, w.viewer));
    expect(diff.added).toEqual(["getHealth"]);
    expect(diff.removed).toEqual(["post_invoices_invoiceId_archive"]);
    const create = diff.changed.find((c) => c.name === "createAccount");
    expect(create?.schemaChanges.map((s) => s.pointer)).toContain("/inputSchema/properties/status/enum");

    api.revision = 2;
    const second = await body<{ pendingSpec: { id: string } }>(
      await w.call("POST", `/v1/mcp-servers/${http.id}/discover/url`, w.owner),
    );
    const promoted = await w.call(
      "POST",
      `/v1/mcp-servers/${http.id}/specs/pending/${second.pendingSpec.id}/promote`,
      w.owner,
    );
    expect(promoted.status, await promoted.clone().text()).toBe(200);
    expect(await body(promoted)).toMatchObject({
      connector: { version: 2, toolCount: 321 },
      pendingSpec: { status: "promoted" },
    });
    const stale = await w.call(
      "POST",
      `/v1/mcp-servers/${http.id}/specs/pending/${first.pendingSpec.id}/promote`,
      w.owner,
    );
    expect(stale.status).toBe(409);

    const tools = await body<{ items: Array<{ name: string; visibility: string }> }>(
      await w.call("GET", `/v1/mcp-servers/${http.id}/tools`, w.owner),
    );
    expect(tools.items.find((t) => t.name === "listAccounts")?.visibility).toBe("hidden");
    expect(tools.items.some((t) => t.name === "getHealth")).toBe(true);
    const forViewer = await body<{ items: Array<{ name: string }> }>(
      await w.call("GET", `/v1/mcp-servers/${http.id}/tools`, w.viewer),
    );
    expect(forViewer.items.some((t) => t.name === "listAccounts")).toBe(false);
    await w.service.context.outbox.flush();
    await expect
      .poll(() => w.audit.find((a) => a.action === "connector.spec_promoted")?.details)
      .toMatchObject({
        version: 2,
        promotedBy: w.owner.id,
      });
  });

  it("attaches, replaces and removes the credential; an unknown credential is a 400", async () => {
    const unknown = await w.call("PUT", `/v1/projects/${w.projectId}/mcp-servers/${http.id}/credentials`, w.owner, {
      credentialId: "cred_x",
    });
    expect(unknown.status).toBe(400);
    const removed = await w.call("DELETE", `/v1/projects/${w.projectId}/mcp-servers/${http.id}/credentials`, w.owner);
    expect(removed.status).toBe(204);
    const unauthorized = await body<{ isError: boolean; content: Array<{ text: string }> }>(
      await w.call("POST", `/v1/mcp-servers/${http.id}/tools/call`, w.developer, {
        name: "getAccount",
        arguments: { accountId: "acc-1" },
      }),
    );
    expect(unauthorized.content[0]?.text).toMatch(/^HTTP 401/);
    const attached = await w.call("PUT", `/v1/projects/${w.projectId}/mcp-servers/${http.id}/credentials`, w.owner, {
      credentialId: w.credentialId,
    });
    expect(await body(attached)).toMatchObject({ credentialId: w.credentialId });
    const wrongProject = await w.call("PUT", `/v1/projects/${w.projectId}/mcp-servers/mcp_none/credentials`, w.owner, {
      credentialId: w.credentialId,
    });
    expect(wrongProject.status).toBe(404);
  });
});
