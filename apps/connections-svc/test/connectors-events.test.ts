// Connector changes write their audit records in the transaction of the change (a record that
// cannot be written leaves no change behind), and the relay publishes them right after the commit
// rather than at its next poll: here the poll comes once a minute, so only that prompt relay can
// bring a record to the bus within the tests' wait.
import { createOutbox } from "@agentplane/events";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ConnectorsContext, deleteConnector, updateConnector } from "../src/connectors/services/connectors.ts";
import { ConnectorRuntime } from "../src/connectors/services/runtime.ts";
import { countPendingSpecs, discoverAgain } from "../src/connectors/services/specs.ts";
import { getConnectorRow } from "../src/connectors/services/store.ts";
import { setEntryVisibility } from "../src/connectors/services/visibility.ts";
import { type ApiUpstream, startApiUpstream } from "./connectors-fixtures/upstreams.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
const PROMPTLY = { timeout: 2_000, interval: 20 };

describe.skipIf(!pg.available)(`connector audit records${pg.reason}`, () => {
  let w: World;
  let api: ApiUpstream;
  let connectorId: string;
  let runtime: ConnectorRuntime;
  /** The service's context with an outbox whose table does not exist: every record written to it fails. */
  let broken: ConnectorsContext;

  beforeAll(async () => {
    [w, api] = await Promise.all([
      startWorld("connectors_events", { eventRelay: { pollIntervalMs: 60_000, maxIdlePollMs: 60_000 } }),
      startApiUpstream(),
    ]);
    const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "commerce",
      specUrl: `${api.url}/openapi.json`,
      credentialId: w.credentialId,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    connectorId = ((await res.json()) as { id: string }).id;
    const context = w.service.context;
    runtime = new ConnectorRuntime(context);
    broken = {
      ...context,
      outbox: createOutbox({ database: w.database, schema: "no_such_schema", bus: w.bus }),
      connectors: runtime,
    };
  }, 120_000);
  afterAll(async () => {
    await runtime?.close();
    await w?.close();
    await api?.close();
  });

  const actor = () => ({ principal: w.owner, orgId: w.orgId, projectId: w.projectId, requestId: "req-events" });
  const row = () => getConnectorRow(w.service.context.db, connectorId);
  const recorded = (action: string) => w.audit.filter((a) => a.action === action && a.targetId === connectorId);

  it("keeps no change whose record cannot be written", async () => {
    await expect(updateConnector(broken, actor(), { connector: await row(), name: "renamed" })).rejects.toThrow();
    expect((await row()).name).toBe("commerce");

    await expect(
      setEntryVisibility(broken, runtime, actor(), await row(), "getAccount", { visibility: "hidden" }),
    ).rejects.toThrow();
    const entries = await w.service.context.db
      .selectFrom("connector_entries")
      .select("entry_name")
      .where("connector_id", "=", connectorId)
      .execute();
    expect(entries).toEqual([]);

    api.revision = 1;
    await expect(discoverAgain(broken, runtime, await row(), actor())).rejects.toThrow();
    expect(await countPendingSpecs(w.service.context, connectorId)).toBe(0);
    api.revision = 0;

    await expect(deleteConnector(broken, actor(), { connector: await row() })).rejects.toThrow();
    expect((await row()).id).toBe(connectorId);
    // Nothing of these reached the bus either: the connector's only record is its creation's.
    await w.service.context.outbox.flush();
    expect(w.audit.filter((a) => a.targetId === connectorId).map((a) => a.action)).toEqual(["connector.created"]);
  });

  it("relays a change's record right after its commit", async () => {
    await vi.waitFor(() => expect(recorded("connector.created")).toHaveLength(1), PROMPTLY);

    api.revision = 1;
    const discovered = await w.call("POST", `/v1/mcp-servers/${connectorId}/discover/url`, w.owner);
    expect(await discovered.json()).toMatchObject({ changed: true });
    await vi.waitFor(() => expect(recorded("connector.spec_discovered")).toHaveLength(1), PROMPTLY);
    expect(recorded("connector.spec_discovered")[0]).toMatchObject({
      targetType: "connector",
      details: { toolCount: expect.any(Number), scheduled: false },
    });

    const hidden = await w.call("PUT", `/v1/mcp-servers/${connectorId}/entries/getAccount/visibility`, w.owner, {
      visibility: "hidden",
    });
    expect(hidden.status, await hidden.clone().text()).toBe(200);
    await vi.waitFor(() => expect(recorded("connector.entry_visibility_changed")).toHaveLength(1), PROMPTLY);
  });

  it("relays a tool call's record right after it is written", async () => {
    const res = await w.call("POST", `/v1/mcp-servers/${connectorId}/tools/call`, w.developer, {
      name: "listAccounts",
      arguments: {},
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await vi.waitFor(() => expect(recorded("connector.tool_called")).toHaveLength(1), PROMPTLY);
    expect(recorded("connector.tool_called")[0]).toMatchObject({
      targetType: "connector",
      outcome: "success",
      details: { tool: "listAccounts", decision: "allow", status: 200 },
    });
  });
});
