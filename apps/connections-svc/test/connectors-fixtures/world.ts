import type { Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus, type OutboxTuning } from "@agentplane/events";
import { inProcessFetch, type Logger, ServiceClient, signIdentity, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase } from "@agentplane/testkit";
import { addMember, json, startActivated } from "../../../tenancy-svc/test/fixtures/harness.ts";
import { type ConnectionsService, createConnectionsService } from "../../src/app.ts";
import { governProject, type RealGovernance, startGovernance } from "./governance.ts";
import { API_TOKEN } from "./upstreams.ts";

export { DENIED_TOOL, DENY_RULE } from "./governance.ts";

export interface World {
  database: Database;
  service: ConnectionsService;
  bus: MemoryBus;
  audit: Array<{ id: string; action: string; outcome: string; targetId: string; details?: Record<string, unknown> }>;
  owner: Principal;
  viewer: Principal;
  developer: Principal;
  outsider: Principal;
  orgId: string;
  projectId: string;
  otherProjectId: string;
  /** The outsider's organization and its team `strangers`. */
  otherOrgId: string;
  otherTeamId: string;
  /** The project's bearer credential for the upstream API, stored by governance. */
  credentialId: string;
  /** The member of team `builders` (project developers); `developer` is not in it. */
  teamMember: Principal;
  teamId: string;
  governance: RealGovernance;
  tenancy: Awaited<ReturnType<typeof startActivated>>;
  call(method: string, path: string, as?: Principal, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

/**
 * `eventRelay`: the service's outbox relay tuning (default: the service's own); `logger`: the
 * connections service's logger (default: silent).
 */
export async function startWorld(
  name: string,
  options: {
    eventRelay?: OutboxTuning;
    fetcher?: { timeoutMs?: number; maxBytes?: number };
    logger?: Logger;
    mcpStreamLifetimeMs?: number;
  } = {},
): Promise<World> {
  const created = await createTestDatabase(name);
  const database = await openDatabase(created.url, { max: 5 });
  const tenancy = await startActivated(database);
  const owner = tenancy.owner;
  const orgId = tenancy.orgId;
  const project = await json<{ id: string }>(
    await tenancy.call("POST", `/v1/orgs/${orgId}/projects`, { as: owner, body: { name: "tools" } }),
  );
  const viewer = await addMember(tenancy, owner, orgId, "viewer@a.test", "viewer");
  const developer = await addMember(tenancy, owner, orgId, "member@a.test", "member");
  const teamMember = await addMember(tenancy, owner, orgId, "builder@a.test", "member");
  const team = await json<{ id: string }>(
    await tenancy.call("POST", `/v1/orgs/${orgId}/teams`, { as: owner, body: { name: "builders" } }),
  );
  const others = await json<{ id: string }>(
    await tenancy.call("POST", `/v1/orgs/${orgId}/teams`, { as: owner, body: { name: "others" } }),
  );
  await tenancy.call("PUT", `/v1/teams/${team.id}/members/${teamMember.id}`, { as: owner });
  await tenancy.call("PUT", `/v1/teams/${others.id}/members/${developer.id}`, { as: owner });
  for (const t of [team, others]) {
    const grant = await tenancy.call("PUT", `/v1/teams/${t.id}/projects/${project.id}`, {
      as: owner,
      body: { role: "developer" },
    });
    if (grant.status !== 200) throw new Error(`team grant failed: ${grant.status} ${await grant.text()}`);
  }
  const outsider = await tenancy.oidcUser("eve@b.test");
  const otherOrg = await json<{ id: string }>(
    await tenancy.call("POST", "/v1/orgs", { as: outsider, body: { name: "B" } }),
  );
  const otherProject = await json<{ id: string }>(
    await tenancy.call("POST", `/v1/orgs/${otherOrg.id}/projects`, { as: outsider, body: { name: "b" } }),
  );
  const otherTeam = await json<{ id: string }>(
    await tenancy.call("POST", `/v1/orgs/${otherOrg.id}/teams`, { as: outsider, body: { name: "strangers" } }),
  );
  const bus = new MemoryBus();
  const audit: World["audit"] = [];
  await bus.subscribe("audit.recorded", async (event) => {
    audit.push(event.data as World["audit"][number]);
  });
  const governance = await startGovernance({
    database,
    bus,
    keys: tenancy.keys,
    authorizer: tenancy.service.authorizer,
  });
  const { credentialId } = await governProject(governance, owner, project.id, API_TOKEN);
  const service = await createConnectionsService({
    database,
    bus,
    keys: tenancy.keys,
    logger: options.logger ?? silentLogger(),
    authorizer: tenancy.service.authorizer,
    signer: { sign: async () => "unused" },
    governance: governance.client,
    platformClients: { tenancy: new ServiceClient("tenancy", inProcessFetch(tenancy.service), tenancy.keys) },
    config: {
      connectors: {
        allowedHosts: ["127.0.0.1"],
        scheduler: false,
        ...(options.fetcher ? { fetcher: options.fetcher } : {}),
      },
      ...(options.eventRelay ? { eventRelay: options.eventRelay } : {}),
      ...(options.mcpStreamLifetimeMs ? { mcpStreamLifetimeMs: options.mcpStreamLifetimeMs } : {}),
    },
  });
  const call = async (method: string, path: string, as?: Principal, body?: unknown) => {
    const headers = new Headers();
    if (as) headers.set("x-agentplane-identity", await signIdentity(tenancy.keys, as, { audience: "connections" }));
    if (body !== undefined) headers.set("content-type", "application/json");
    return service.fetch(
      new Request(`http://connections.test${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
  };
  return {
    database,
    service,
    bus,
    audit,
    owner,
    viewer,
    developer,
    outsider,
    orgId,
    projectId: project.id,
    otherProjectId: otherProject.id,
    otherOrgId: otherOrg.id,
    otherTeamId: otherTeam.id,
    credentialId,
    teamMember,
    teamId: team.id,
    governance,
    tenancy,
    call,
    async close() {
      await service.close();
      await governance.close();
      await tenancy.service.close();
      await bus.close();
      await database.close();
      await created.drop();
    },
  };
}
