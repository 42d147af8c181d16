// Credentials written into a connector's URLs are used as given but never shown: not in answers
// (to viewers or admins), audit records, stored errors or problem details.
import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { answerAddToolMcp } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
const MCP_SECRET = "sk-live-mcp-9d2f71c4";
const SPEC_SECRET = "spec-token-55ab90e1";
const SERVER_SECRET = "server-key-0c7d13aa";
const BASE_SECRET = "base-sig-7e21b04f";
const USER_SECRET = "hunter2-userinfo-pw";
const ALL = [MCP_SECRET, SPEC_SECRET, SERVER_SECRET, BASE_SECRET, USER_SECRET];

interface StandIn extends LocalServer {
  /** Every request's path and query, as the stand-in received them. */
  urls: string[];
  /**
   * When set, `/mcp` answers in a content type that repeats the URL it was called at (words of the
   * server's own choosing, which the MCP client quotes in its error).
   */
  echo: boolean;
}

/**
 * An upstream that is an MCP server at `/mcp` (one tool, `add`), serves an OpenAPI description
 * at `/openapi.json` whose server URL carries a key, and a broken YAML description at
 * `/broken.yaml` that quotes the request URL (as a parser's error then does).
 */
async function startStandIn(): Promise<StandIn> {
  const state = { urls: [] as string[], echo: false };
  const server = await startLocalServer(async (req, res) => {
    state.urls.push(req.url ?? "");
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/openapi.json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          openapi: "3.0.3",
          info: { title: "keyed", version: "1" },
          servers: [{ url: `http://127.0.0.1:${server.port}/v1?key=${SERVER_SECRET}` }],
          paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "ok" } } } } },
        }),
      );
      return;
    }
    if (url.pathname === "/broken.yaml") {
      res.writeHead(200, { "content-type": "application/yaml" });
      res.end(`openapi: 3.0.3\nsource: [${req.url}\n  - : :\n`);
      return;
    }
    if (url.pathname !== "/mcp" || req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    if (state.echo) {
      res.writeHead(200, { "content-type": `text/plain; source="${req.url}"` });
      res.end(`Cannot ${req.method} ${req.url}`);
      return;
    }
    await answerAddToolMcp("keyed-mcp", req, res);
  });
  return Object.defineProperties(server, {
    urls: { get: () => state.urls },
    echo: {
      get: () => state.echo,
      set: (value: boolean) => {
        state.echo = value;
      },
    },
  }) as StandIn;
}

const expectNoSecret = (text: string) => {
  for (const secret of ALL) expect(text).not.toContain(secret);
};

describe.skipIf(!pg.available)(`credentials in connector URLs are never shown${pg.reason}`, () => {
  let w: World;
  let up: StandIn;
  let mcpId = "";

  beforeAll(async () => {
    [w, up] = await Promise.all([startWorld("connectors_url_credentials"), startStandIn()]);
  }, 120_000);
  afterAll(async () => {
    await w?.close();
    await up?.close();
  });

  const storedRow = (id: string) =>
    w.service.context.db
      .selectFrom("connectors")
      .select(["url", "spec_url", "base_url"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();

  it("creates an MCP connector with a key in its query: answers redact it, the server still gets it", async () => {
    const url = `${up.url}/mcp?api_key=${MCP_SECRET}&region=eu`;
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, { name: "keyed", url });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    expectNoSecret(text);
    const created = JSON.parse(text) as { id: string; url: string };
    mcpId = created.id;
    expect(created.url).toBe(`${up.url}/mcp?api_key=REDACTED&region=eu`);
    expect(up.urls).toContain(`/mcp?api_key=${MCP_SECRET}&region=eu`);
    expect((await storedRow(mcpId)).url).toBe(url);

    // Viewers read connectors (connections:read); admins created it (connections:manage).
    for (const as of [w.viewer, w.owner]) {
      const got = await w.call("GET", `/v1/mcp-servers/${mcpId}`, as);
      const gotText = await got.text();
      expect(got.status, gotText).toBe(200);
      expectNoSecret(gotText);
      expect(JSON.parse(gotText)).toMatchObject({ url: created.url });
      const list = await w.call("GET", `/v1/projects/${w.projectId}/mcp-servers`, as);
      const listText = await list.text();
      expect(list.status).toBe(200);
      expectNoSecret(listText);
      expect(listText).toContain(created.url);
    }

    // Calls keep using the whole URL.
    const before = up.urls.length;
    const called = await w.call("POST", `/v1/mcp-servers/${mcpId}/tools/call`, w.developer, {
      name: "add",
      arguments: { a: 2, b: 3 },
    });
    expect(called.status, await called.clone().text()).toBe(200);
    expect(up.urls.slice(before)).toContain(`/mcp?api_key=${MCP_SECRET}&region=eu`);

    await vi.waitFor(() => {
      const record = w.audit.find((r) => r.action === "connector.created" && r.targetId === mcpId);
      expect(record?.details).toMatchObject({ name: "keyed", url: created.url });
    });
    expectNoSecret(JSON.stringify(w.audit));
  });

  it("a server repeating its URL in errors: the key stays out of lastError and the 502s", async () => {
    up.echo = true;
    try {
      const before = up.urls.length;
      const res = await w.call("POST", `/v1/mcp-servers/${mcpId}/discover/url`, w.owner);
      const text = await res.text();
      expect(res.status, text).toBe(502);
      expectNoSecret(text);
      expect(up.urls.slice(before)).toContain(`/mcp?api_key=${MCP_SECRET}&region=eu`);

      // A tool call meeting the same answer: a 502 that does not repeat it either.
      const called = await w.call("POST", `/v1/mcp-servers/${mcpId}/tools/call`, w.developer, {
        name: "add",
        arguments: { a: 1, b: 1 },
      });
      const calledText = await called.text();
      expect(called.status, calledText).toBe(502);
      // Named by its cause; the server's words (which repeated the URL) are not quoted.
      expect(calledText).toContain("not JSON-RPC (content-type text/plain)");
      expect(calledText).not.toContain("source=");
      expectNoSecret(calledText);
    } finally {
      up.echo = false;
    }
    const status = await w.call("GET", `/v1/mcp-servers/${mcpId}/status`, w.viewer);
    const statusText = await status.text();
    expect(JSON.parse(statusText)).toMatchObject({ status: "error", lastError: expect.stringContaining("JSON-RPC") });
    expectNoSecret(statusText);
    const got = await (await w.call("GET", `/v1/mcp-servers/${mcpId}`, w.viewer)).text();
    expect(JSON.parse(got)).toMatchObject({
      lastError: expect.stringContaining("the MCP server's answer is not JSON-RPC (content-type text/plain)"),
    });
    expect(got).not.toContain("source=");
    expectNoSecret(got);
  });

  it("a connector URL with user info is refused without repeating the password", async () => {
    const before = up.urls.length;
    const url = `http://user:${USER_SECRET}@127.0.0.1:${up.port}/mcp`;
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, { name: "userinfo", url });
    const text = await res.text();
    expect(res.status, text).toBe(422);
    expect(JSON.parse(text)).toMatchObject({ reason: "invalid-url" });
    expectNoSecret(text);
    expect(up.urls.length).toBe(before);
  });

  it("an HTTP connector: spec and server URLs redacted in create, preview and audit", async () => {
    const specUrl = `${up.url}/openapi.json?access_token=${SPEC_SECRET}`;
    const preview = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/discover/preview`, w.owner, {
      specUrl,
    });
    const previewText = await preview.text();
    expect(preview.status, previewText).toBe(200);
    expectNoSecret(previewText);
    expect(JSON.parse(previewText)).toMatchObject({ baseUrl: `${up.url}/v1?key=REDACTED` });

    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "keyed-http",
      specUrl,
    });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    expectNoSecret(text);
    const created = JSON.parse(text) as { id: string };
    expect(created).toMatchObject({
      specUrl: `${up.url}/openapi.json?access_token=REDACTED`,
      baseUrl: `${up.url}/v1?key=REDACTED`,
    });
    expect(up.urls).toContain(`/openapi.json?access_token=${SPEC_SECRET}`);
    expect(await storedRow(created.id)).toMatchObject({
      spec_url: specUrl,
      base_url: `${up.url}/v1?key=${SERVER_SECRET}`,
    });

    // PATCH: a new base URL with a signature is answered redacted and stored whole ...
    const baseUrl = `${up.url}/v2?X-Amz-Signature=${BASE_SECRET}&X-Amz-Date=20260101T000000Z`;
    const patched = await w.call("PATCH", `/v1/mcp-servers/${created.id}`, w.owner, { baseUrl });
    const patchedText = await patched.text();
    expect(patched.status, patchedText).toBe(200);
    expectNoSecret(patchedText);
    const shown = (JSON.parse(patchedText) as { baseUrl: string }).baseUrl;
    expect(shown).toBe(`${up.url}/v2?X-Amz-Signature=REDACTED&X-Amz-Date=20260101T000000Z`);
    expect((await storedRow(created.id)).base_url).toBe(baseUrl);

    // ... sent back as answered (an edit form's round trip), it keeps the stored secret ...
    const roundTrip = await w.call("PATCH", `/v1/mcp-servers/${created.id}`, w.owner, {
      name: "renamed-http",
      baseUrl: shown,
    });
    expect(roundTrip.status, await roundTrip.clone().text()).toBe(200);
    expect(await roundTrip.json()).toMatchObject({ name: "renamed-http", baseUrl: shown });
    expect((await storedRow(created.id)).base_url).toBe(baseUrl);

    // ... and the marker in any other URL is a 400 naming the field, never stored.
    const marked = await w.call("PATCH", `/v1/mcp-servers/${created.id}`, w.owner, {
      baseUrl: `${up.url}/v3?X-Amz-Signature=REDACTED`,
    });
    expect(marked.status).toBe(400);
    expect(await marked.json()).toMatchObject({ errors: [{ pointer: "/body/baseUrl" }] });
    expect((await storedRow(created.id)).base_url).toBe(baseUrl);

    await vi.waitFor(() => {
      const updates = w.audit.filter((r) => r.action === "connector.updated" && r.targetId === created.id);
      expect(updates.map((r) => r.details)).toEqual(
        expect.arrayContaining([{ fields: ["baseUrl"], baseUrl: shown }, { fields: ["name"] }]),
      );
      expect(w.audit.find((r) => r.action === "connector.created" && r.targetId === created.id)?.details).toMatchObject(
        { specUrl: `${up.url}/openapi.json?access_token=REDACTED`, baseUrl: `${up.url}/v1?key=REDACTED` },
      );
    });
    expectNoSecret(JSON.stringify(w.audit));
  });

  it("refuses a redacted URL on create, and keeps a served URL's key out of a parser's 400", async () => {
    const marked = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
      name: "copied",
      url: `${up.url}/mcp?api_key=REDACTED`,
    });
    expect(marked.status).toBe(400);
    expect(await marked.json()).toMatchObject({ errors: [{ pointer: "/body/url" }] });

    const broken = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "broken",
      specUrl: `${up.url}/broken.yaml?token=${SPEC_SECRET}`,
    });
    const text = await broken.text();
    expect(broken.status, text).toBe(400);
    expect(up.urls).toContain(`/broken.yaml?token=${SPEC_SECRET}`);
    // The parser's code frame, which repeated the URL, is not quoted at all.
    expect(text).toContain("not valid YAML at line 2");
    expect(text).not.toContain("/broken.yaml");
    expectNoSecret(text);
  });
});
