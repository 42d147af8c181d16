import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { API_TOKEN } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
const TIMEOUT_MS = 500;

const SPEC = {
  openapi: "3.0.3",
  info: { title: "slow", version: "1" },
  paths: { "/slow": { get: { operationId: "slow", responses: { "200": { description: "ok" } } } } },
};

describe.skipIf(!pg.available)(`a tool call whose upstream fails is answered in time${pg.reason}`, () => {
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

  const connector = async (name: string, baseUrl: string): Promise<string> => {
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name,
      spec: SPEC,
      baseUrl,
      credentialId: w.credentialId,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const call = async (id: string) => {
    const started = Date.now();
    const res = await w.call("POST", `/v1/mcp-servers/${id}/tools/call`, w.developer, { name: "slow", arguments: {} });
    const text = await res.text();
    return {
      status: res.status,
      elapsed: Date.now() - started,
      text,
      body: JSON.parse(text) as Record<string, unknown>,
    };
  };

  it("an upstream that never answers is a 504 naming the timeout, within the bound", async () => {
    const answer = await call(await connector("hanging", hangingUrl));
    expect(answer.status, answer.text).toBe(504);
    expect(answer.body).toMatchObject({ reason: "timeout", detail: expect.stringContaining("Connector hanging") });
    expect(answer.elapsed).toBeLessThan(TIMEOUT_MS + 3000);
    expect(answer.text).not.toContain(API_TOKEN);
  });

  it("an upstream that refuses the connection is a 502 naming the cause", async () => {
    const answer = await call(await connector("closed", closedUrl));
    expect(answer.status, answer.text).toBe(502);
    expect(answer.body).toMatchObject({ reason: "unreachable", detail: expect.stringContaining("refused") });
    expect(answer.text).not.toContain(API_TOKEN);
    await vi.waitFor(() => {
      const audited = w.audit.filter((r) => r.action === "connector.tool_called" && r.outcome === "error");
      expect(audited.map((r) => r.details?.error)).toEqual(expect.arrayContaining(["timeout", "unreachable"]));
    });
  });
});
