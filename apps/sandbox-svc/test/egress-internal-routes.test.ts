// sandbox-svc's two routes for the egress deployable, which holds no database (decision 0065):
// accepted from the egress proxy's own key and from no other, and that key opens nothing else.
import {
  EGRESS_IDENTITY_SIGNER,
  type EgressRefusalRequest,
  internalGetSandboxEgressRoute,
  internalQuerySandboxesRoute,
  internalRecordEgressRefusalRoute,
  internalResolveSandboxTokenRoute,
  type Principal,
} from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import {
  callInternal,
  generateInternalKeys,
  type InternalKeys,
  importOwnKeys,
  importScopedPublicKey,
  inProcessFetch,
  ServiceClient,
  servicePrincipal,
  silentLogger,
} from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSandboxService, SANDBOX_SCHEMA, type SandboxService } from "../src/app.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import { tempDataDir } from "./helpers.ts";
import { runningSandboxRow } from "./running-sandbox-row.ts";

interface Recorded {
  action: string;
  orgId: string;
  projectId: string;
  principal: unknown;
  details: Record<string, unknown>;
}

/** The status a call answers: 200, or its problem's. */
async function status(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (err) {
    if (err instanceof ProblemError) return err.status;
    throw err;
  }
}

describe("sandbox-svc's egress routes (decision 0065)", () => {
  let database: Database;
  let service: SandboxService;
  let withoutKey: SandboxService;
  let egressKeys: InternalKeys;
  let otherEgressKeys: InternalKeys;
  let sharedKeys: InternalKeys;
  const bus = new MemoryBus();
  const recorded: Recorded[] = [];
  const egress = servicePrincipal(EGRESS_IDENTITY_SIGNER);

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    sharedKeys = await generateInternalKeys();
    const pair = await generateInternalKeys();
    egressKeys = await importOwnKeys("egress", "EGRESS_IDENTITY_PRIVATE_KEY", JSON.stringify(pair.privateJwk));
    const other = await generateInternalKeys();
    otherEgressKeys = await importOwnKeys("egress", "EGRESS_IDENTITY_PRIVATE_KEY", JSON.stringify(other.privateJwk));
    await bus.subscribe("audit.recorded", async (e) => {
      recorded.push(e.data as Recorded);
    });
    const common = {
      database,
      bus,
      keys: sharedKeys,
      logger: silentLogger(),
      authorizer: { check: () => Promise.reject(new Error("internal routes do not ask tenancy")) },
      config: { dataDir: tempDataDir() },
    };
    service = await createSandboxService({
      ...common,
      egressPublicKey: await importScopedPublicKey("EGRESS_IDENTITY_PUBLIC_KEY", JSON.stringify(pair.publicJwk)),
    });
    withoutKey = await createSandboxService({ ...common, database, config: { dataDir: tempDataDir() } });
    await database
      .forSchema<SandboxDB>(SANDBOX_SCHEMA)
      .insertInto("sandboxes")
      .values(
        runningSandboxRow({
          id: "sbx_facts",
          project_id: "prj_facts",
          org_id: "org_facts",
          name: "facts",
          slug: "facts",
          env: { SECRET_TOKEN: "never-sent" },
          labels: { team: "ml" },
        }),
      )
      .execute();
  });
  afterAll(async () => {
    await service?.close();
    await withoutKey?.close();
    await database?.close();
  });

  const client = (keys: InternalKeys, of: SandboxService = service) =>
    new ServiceClient("sandbox", inProcessFetch(of), keys);
  const facts = (keys: InternalKeys, sandboxId: string, as: Principal = egress, of?: SandboxService) =>
    callInternal(client(keys, of), internalGetSandboxEgressRoute, { principal: as, params: { sandboxId } });
  const refusal: EgressRefusalRequest = {
    sandboxId: "sbx_facts",
    host: "registry.test",
    port: 443,
    ruleId: "rule_registry",
    reasons: [{ policyId: "pol_1", version: 3, ruleId: "rule_registry", bindingId: "bnd_1" }],
    policies: [{ bindingId: "bnd_1", policyId: "pol_1", version: 3 }],
  };
  const record = (keys: InternalKeys, body: EgressRefusalRequest, as: Principal = egress) =>
    callInternal(client(keys), internalRecordEgressRefusalRoute, { principal: as, body });

  it("answers a sandbox's organization, project and labels to the egress proxy, and 404 when unknown", async () => {
    expect(await facts(egressKeys, "sbx_facts")).toEqual({
      id: "sbx_facts",
      orgId: "org_facts",
      projectId: "prj_facts",
      labels: { team: "ml" },
    });
    expect(await status(facts(egressKeys, "sbx_unknown"))).toBe(404);
  });

  it("records a refusal as sandbox.egress_denied through its outbox, in the sandbox's own org and project", async () => {
    recorded.length = 0;
    expect(await record(egressKeys, refusal)).toEqual({ recorded: true });
    // A window's summary and a refusal of the proxy's own (no rule: its reason).
    await record(egressKeys, { ...refusal, repeats: 4, windowSeconds: 60 });
    await record(egressKeys, { ...refusal, ruleId: null, reasons: [], policies: [], reason: "private address" });
    await vi.waitFor(() => expect(recorded).toHaveLength(3), { timeout: 5000 });
    for (const r of recorded) {
      expect(r).toMatchObject({ action: "sandbox.egress_denied", orgId: "org_facts", projectId: "prj_facts" });
      // By the sandbox itself, as sandbox-svc's own proxy records it.
      expect(r.principal).toEqual({ type: "sandbox", id: "sbx_facts" });
    }
    expect(recorded.map((r) => r.details)).toEqual([
      {
        host: "registry.test",
        port: 443,
        ruleId: "rule_registry",
        reasons: refusal.reasons,
        policies: refusal.policies,
      },
      {
        host: "registry.test",
        port: 443,
        ruleId: "rule_registry",
        reasons: refusal.reasons,
        policies: refusal.policies,
        repeats: 4,
        windowSeconds: 60,
      },
      { host: "registry.test", port: 443, ruleId: null, reasons: [], policies: [], reason: "private address" },
    ]);
    expect(await status(record(egressKeys, { ...refusal, sandboxId: "sbx_unknown" }))).toBe(404);
  });

  it("answers 401 to the egress proxy's identity on every other route", async () => {
    const asSandbox: Principal = { type: "sandbox", id: "sbx_facts", sandboxId: "sbx_facts", projectId: "prj_facts" };
    const egressClient = client(egressKeys);
    const refused = [
      () => egressClient.request("GET", "/v1/projects/prj_facts/sandboxes", { principal: asSandbox }),
      () => egressClient.request("GET", "/v1/projects/prj_facts/sandboxes/sbx_facts", { principal: egress }),
      () =>
        callInternal(egressClient, internalQuerySandboxesRoute, { principal: egress, body: { orgId: "org_facts" } }),
      () =>
        callInternal(egressClient, internalResolveSandboxTokenRoute, {
          principal: egress,
          body: { token: "apsb_x_y" },
        }),
      // On its own routes, only as a service.
      () =>
        callInternal(egressClient, internalGetSandboxEgressRoute, {
          principal: asSandbox,
          params: { sandboxId: "sbx_facts" },
        }),
    ];
    for (const call of refused) expect(await status(call())).toBe(401);
  });

  it("refuses the egress routes to another key named egress, to other services, and without the public key", async () => {
    // Signed with a key that is not the proxy's: an invalid identity.
    expect(await status(facts(otherEgressKeys, "sbx_facts"))).toBe(401);
    expect(await status(record(otherEgressKeys, refusal))).toBe(401);
    // Another service with the shared key: a valid identity, not a caller of these routes.
    expect(await status(facts(sharedKeys, "sbx_facts", servicePrincipal("governance")))).toBe(403);
    expect(await status(record(sharedKeys, refusal, servicePrincipal("sandbox")))).toBe(403);
    // A sandbox-svc without EGRESS_IDENTITY_PUBLIC_KEY does not know the proxy's identities at all.
    expect(await status(facts(egressKeys, "sbx_facts", egress, withoutKey))).toBe(401);
  });
});
