// MCP tool names are `<connector>__<tool>` (project endpoint) and `<project>__<connector>__<tool>`
// (organization endpoint): no two connectors may produce the same name, or one would shadow the
// other's tools.
import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json } from "../../tenancy-svc/test/fixtures/harness.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

const spec = {
  openapi: "3.0.3",
  info: { title: "ping", version: "1" },
  servers: [{ url: "https://api.example.test" }],
  paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "ok" } } } } },
};

describe.skipIf(!pg.available)(`connector tool names${pg.reason}`, () => {
  let w: World;

  async function orgTools(): Promise<string[]> {
    const identity = await signIdentity(w.tenancy.keys, w.owner, { audience: "connections" });
    const res = await w.service.fetch(
      new Request(`http://connections.test/mcp?orgId=${w.orgId}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-agentplane-identity": identity,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    const message = text.startsWith("{") ? text : (text.match(/^data: (.*)$/m)?.[1] ?? "{}");
    return (JSON.parse(message) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
  }

  beforeAll(async () => {
    w = await startWorld("connectors_tool_names");
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it("refuses connector names that would make the tool name's separator ambiguous, naming the field", async () => {
    for (const name of ["a__b", "a_", "a-_"]) {
      const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, { name, spec });
      expect(created.status, name).toBe(400);
      expect(((await created.json()) as { errors: Array<{ pointer: string }> }).errors[0]?.pointer).toBe("/body/name");
    }
    const ok = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, { name: "a", spec });
    expect(ok.status).toBe(201);
    const { id } = (await ok.json()) as { id: string };
    const renamed = await w.call("PATCH", `/v1/mcp-servers/${id}`, w.owner, { name: "a_" });
    expect(renamed.status).toBe(400);
    expect(((await renamed.json()) as { errors: Array<{ pointer: string }> }).errors[0]?.pointer).toBe("/body/name");
    expect((await w.call("DELETE", `/v1/mcp-servers/${id}`, w.owner)).status).toBe(204);
  });

  it("gives connectors of projects with the same or similar names distinct tool names on the org endpoint", async () => {
    // The world's project is named `tools`; these read the same once made a prefix.
    const projects = [w.projectId];
    for (const name of ["tools", "tools!", "tools__"]) {
      const project = await json<{ id: string }>(
        await w.tenancy.call("POST", `/v1/orgs/${w.orgId}/projects`, { as: w.owner, body: { name } }),
      );
      projects.push(project.id);
    }
    for (const projectId of projects) {
      const created = await w.call("POST", `/v1/projects/${projectId}/mcp-servers/http`, w.owner, {
        name: "api",
        spec,
      });
      expect(created.status, await created.clone().text()).toBe(201);
    }
    const names = (await orgTools()).filter((n) => n.endsWith("__api__ping"));
    expect(names).toHaveLength(projects.length);
    expect(new Set(names).size).toBe(projects.length);
    for (const projectId of projects) {
      expect(names).toContain(`tools_${projectId.replace(/[^a-zA-Z0-9]+/g, "")}__api__ping`);
    }
  });
});
