// A connector change through the platform leaves two records in the organization's trail: the
// gateway's request record, named after the API operation, and connections-svc's domain event,
// named `connector.<verb>` like every other service's, so the two are told apart by name.
import { type AuditRecord, REQUEST_ID_HEADER } from "@agentplane/contracts";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectionsPlatform,
  startConnectionsPlatform,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { startMcpUpstream } from "./connectors-fixtures/upstreams.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`connector records in the audit trail${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let mcp: Awaited<ReturnType<typeof startMcpUpstream>>;

  beforeAll(async () => {
    mcp = await startMcpUpstream();
    h = await startConnectionsPlatform({ env: { CONNECTOR_ALLOWED_HOSTS: `127.0.0.1:${new URL(mcp.url).port}` } });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await mcp?.close();
  });

  /** The trail's records of one request, once both the request record and the domain event are stored. */
  const recordsOf = (requestId: string) =>
    waitFor(
      async () => {
        const page = await h.call<{ items: AuditRecord[] }>("GET", `/v1/orgs/${h.orgId}/audit-trail?limit=200`, {
          token: h.ownerToken,
        });
        const mine = page.body.items.filter((r) => r.requestId === requestId);
        return mine.some((r) => r.source === "request") && mine.some((r) => r.source === "domain") && mine;
      },
      20_000,
      `the records of request ${requestId}`,
    );

  it("names the creation's request record after the operation and its domain event connector.created", async () => {
    const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/mcp-servers`, {
      token: h.adminToken,
      body: { name: "upstream", url: mcp.url },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const requestId = created.headers.get(REQUEST_ID_HEADER) ?? "";
    expect(requestId).not.toBe("");

    const records = await recordsOf(requestId);
    expect(records.map((r) => `${r.source} ${r.action}`).sort()).toEqual([
      "domain connector.created",
      "request createMcpConnector",
    ]);
    expect(records.find((r) => r.source === "request")).toMatchObject({
      action: "createMcpConnector",
      status: 201,
      outcome: "success",
      projectId: h.projectId,
    });
    expect(records.find((r) => r.source === "domain")).toMatchObject({
      action: "connector.created",
      outcome: "success",
      projectId: h.projectId,
      targetType: "connector",
      targetId: created.body.id,
      details: { name: "upstream", kind: "mcp", toolCount: 2 },
    });

    // A tool call likewise: `callConnectorTool` from the gateway, `connector.tool_called` from the service.
    const called = await h.call("POST", `/v1/mcp-servers/${created.body.id}/tools/call`, {
      token: h.memberToken,
      body: { name: "add", arguments: { a: 2, b: 3 } },
    });
    expect(called.status, JSON.stringify(called.body)).toBe(200);
    const calls = await recordsOf(called.headers.get(REQUEST_ID_HEADER) ?? "");
    expect(calls.map((r) => `${r.source} ${r.action}`).sort()).toEqual([
      "domain connector.tool_called",
      "request callConnectorTool",
    ]);
    expect(calls.find((r) => r.source === "domain")).toMatchObject({
      targetType: "connector",
      targetId: created.body.id,
      details: { tool: "add", decision: "allow", argumentNames: ["a", "b"] },
    });
  });
});
