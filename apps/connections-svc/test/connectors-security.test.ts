import { connectorRoutes, type Principal } from "@agentplane/contracts";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

/** A valid body per operation, so validation passes and the authorization answer shows. */
const BODIES: Record<string, unknown> = {
  createMcpConnector: { name: "x", url: "https://mcp.example.test/mcp" },
  createHttpConnector: { name: "x", spec: { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} } },
  previewConnectorDiscovery: { spec: { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} } },
  attachConnectorCredential: { credentialId: "cred_any" },
  updateConnector: { name: "renamed" },
  setConnectorEntryVisibility: { visibility: "hidden" },
  callConnectorTool: { name: "ping", arguments: {} },
};

describe.skipIf(!pg.available)(`connector routes: authentication and tenancy checks${pg.reason}`, () => {
  let w: World;
  let ids: Record<string, string>;

  beforeAll(async () => {
    w = await startWorld("connectors_security");
    const spec = {
      openapi: "3.1.0",
      info: { title: "t", version: "1" },
      servers: [{ url: "https://api.example.test" }],
      paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "ok" } } } } },
    };
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, { name: "sec", spec });
    expect(res.status).toBe(201);
    const connector = (await res.json()) as { id: string };
    ids = {
      projectId: w.projectId,
      serverId: connector.id,
      connectorId: connector.id,
      specId: "pspec_none",
      entryName: "ping",
    };
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  const fill = (path: string, values: Record<string, string>) =>
    path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? `missing-${name}`);
  const send = (route: (typeof connectorRoutes)[number], as: Principal | undefined, values = ids) =>
    w.call(route.method.toUpperCase(), fill(route.path, values), as, BODIES[route.operationId]);

  it.each(connectorRoutes.map((r) => [r.operationId, r] as const))(
    "%s: 401 without an identity",
    async (_id, route) => {
      const res = await send(route, undefined);
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    },
  );

  it.each(connectorRoutes.map((r) => [r.operationId, r] as const))(
    "%s: 404 for a caller of another organization",
    async (_id, route) => {
      const res = await send(route, w.outsider);
      expect(res.status).toBe(404);
    },
  );

  it.each(
    connectorRoutes.filter((r) => r["x-permission"] !== "connections:read").map((r) => [r.operationId, r] as const),
  )("%s: 403 for a project viewer", async (_id, route) => {
    const res = await send(route, w.viewer);
    expect(res.status).toBe(403);
  });

  it("project paths of another organization answer 404 to its owner's peers too", async () => {
    const res = await w.call("GET", `/v1/projects/${w.otherProjectId}/mcp-servers`, w.owner);
    expect(res.status).toBe(404);
  });
});
