import { GOVERNANCE_INTERNAL, type Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { inProcessFetch, ServiceClient, signIdentity, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase } from "@agentplane/testkit";
import { addMember, json, startActivated } from "../../../tenancy-svc/test/fixtures/harness.ts";
import { type ConnectionsService, createConnectionsService } from "../../src/app.ts";
import { API_TOKEN } from "./upstreams.ts";

export const DENIED_TOOL = "deleteAccount";
export const DENY_RULE = "rule-no-account-deletes";

/**
 * Stand-in for governance-svc's internal contract (decide, resolve credential): denies tool:call of
 * `deleteAccount`, resolves `cred_api` of the one project to the upstream API's bearer token.
 */
function governanceStandIn(projectId: () => string) {
  return inProcessFetch({
    async fetch(request: Request) {
      const url = new URL(request.url);
      const body = (await request.json()) as Record<string, unknown>;
      const reply = (status: number, value: unknown) =>
        new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
      if (url.pathname === GOVERNANCE_INTERNAL.decide) {
        const resource = body.resource as { id: string };
        const deny = resource.id.endsWith(`__${DENIED_TOOL}`);
        return reply(200, {
          decision: deny ? "deny" : "allow",
          enforced: deny,
          reasons: deny
            ? [{ policyId: "pol_1", version: 1, ruleId: DENY_RULE, bindingId: "pbd_1", mode: "enforce" }]
            : [],
          evaluatedAt: new Date().toISOString(),
        });
      }
      if (url.pathname === GOVERNANCE_INTERNAL.resolveCredential) {
        if (body.credentialId === "cred_api" && body.projectId === projectId()) {
          return reply(200, { id: "cred_api", kind: "http-bearer", fields: { token: API_TOKEN } });
        }
        return reply(404, { type: "about:blank", title: "Not Found", status: 404 });
      }
      return reply(404, {});
    },
  });
}

export interface World {
  database: Database;
  service: ConnectionsService;
  bus: MemoryBus;
  audit: Array<{ action: string; outcome: string; targetId: string; details?: Record<string, unknown> }>;
  owner: Principal;
  viewer: Principal;
  developer: Principal;
  outsider: Principal;
  orgId: string;
  projectId: string;
  otherProjectId: string;
  tenancy: Awaited<ReturnType<typeof startActivated>>;
  call(method: string, path: string, as?: Principal, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

export async function startWorld(name: string): Promise<World> {
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
  const team = await json<{ id: string }>(
    await tenancy.call("POST", `/v1/orgs/${orgId}/teams`, { as: owner, body: { name: "builders" } }),
  );
  await tenancy.call("PUT", `/v1/teams/${team.id}/members/${developer.id}`, { as: owner });
  const grant = await tenancy.call("PUT", `/v1/teams/${team.id}/projects/${project.id}`, {
    as: owner,
    body: { role: "developer" },
  });
  if (grant.status !== 200) throw new Error(`team grant failed: ${grant.status} ${await grant.text()}`);
  const outsider = await tenancy.oidcUser("eve@b.test");
  const otherOrg = await json<{ id: string }>(
    await tenancy.call("POST", "/v1/orgs", { as: outsider, body: { name: "B" } }),
  );
  const otherProject = await json<{ id: string }>(
    await tenancy.call("POST", `/v1/orgs/${otherOrg.id}/projects`, { as: outsider, body: { name: "b" } }),
  );
  const bus = new MemoryBus();
  const audit: World["audit"] = [];
  await bus.subscribe("audit.recorded", async (event) => {
    audit.push(event.data as World["audit"][number]);
  });
  const service = await createConnectionsService({
    database,
    bus,
    keys: tenancy.keys,
    logger: silentLogger(),
    authorizer: tenancy.service.authorizer,
    signer: { sign: async () => "unused" },
    governance: new ServiceClient(
      "governance",
      governanceStandIn(() => project.id),
      tenancy.keys,
    ),
    config: { connectors: { allowedHosts: ["127.0.0.1"], scheduler: false } },
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
    tenancy,
    call,
    async close() {
      await service.close();
      await tenancy.service.close();
      await bus.close();
      await database.close();
      await created.drop();
    },
  };
}
