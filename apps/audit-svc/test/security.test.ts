import { auditRoutes, type ContractRoute, PERMISSIONS, type Permission, type Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { signIdentity, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, startActivated } from "../../tenancy-svc/test/fixtures/harness.ts";
import { type AuditService, createAuditService } from "../src/app.ts";

const pg = await requirePostgres();

/** A valid body per operation, so validation passes and the authorization answer shows. */
const BODIES: Record<string, unknown> = {
  createSpendingLimit: { amountUsd: 5, period: "daily" },
  updateSpendingLimit: { amountUsd: 6 },
};

type Ids = Record<string, string>;

// Every audit route: no identity is a 401, another organization's ids a 404 (the same answer as
// ids that exist nowhere), a role below the route's a 403; each as a problem+json.
describe.skipIf(!pg.available)(`audit route security through the real tenancy service${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let audit: AuditService;
  let tenancy: Awaited<ReturnType<typeof startActivated>>;
  let owner: Principal;
  let ownerB: Principal;
  let viewer: Principal;
  let a: Ids;
  let b: Ids;

  const call = async (method: string, path: string, as: Principal | undefined, body?: unknown) => {
    const headers = new Headers();
    if (as) headers.set("x-agentplane-identity", await signIdentity(tenancy.keys, as, { audience: "audit" }));
    if (body !== undefined) headers.set("content-type", "application/json");
    return audit.fetch(
      new Request(`http://audit.test${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
  };
  const seed = async (as: Principal, orgId: string): Promise<Ids> => {
    const project = await tenancy.call("POST", `/v1/orgs/${orgId}/projects`, { as, body: { name: "p" } });
    const projectId = ((await project.json()) as { id: string }).id;
    const limit = await call("POST", `/v1/orgs/${orgId}/spending-limits`, as, { amountUsd: 10, projectId });
    expect(limit.status).toBe(201);
    return { orgId, projectId, limitId: ((await limit.json()) as { id: string }).id };
  };
  const fill = (route: ContractRoute, ids: Ids) =>
    route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const id = ids[name];
      if (!id) throw new Error(`no id for ${name}`);
      return id;
    });
  const request = (route: ContractRoute, ids: Ids, as?: Principal) =>
    call(route.method.toUpperCase(), fill(route, ids), as, BODIES[route.operationId]);

  beforeAll(async () => {
    const created = await createTestDatabase("audit_security");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    tenancy = await startActivated(database);
    owner = tenancy.owner;
    ownerB = await tenancy.oidcUser("mallory@b.test");
    const other = await tenancy.call("POST", "/v1/orgs", { as: ownerB, body: { name: "B" } });
    const orgB = ((await other.json()) as { id: string }).id;
    viewer = await addMember(tenancy, owner, tenancy.orgId, "vera@a.test", "viewer");
    audit = await createAuditService({
      database,
      bus: new MemoryBus(),
      keys: tenancy.keys,
      logger: silentLogger(),
      authorizer: tenancy.service.authorizer,
      config: { maintenance: false },
    });
    a = await seed(owner, tenancy.orgId);
    b = await seed(ownerB, orgB);
  }, 60_000);
  afterAll(async () => {
    await audit?.close();
    await tenancy?.service.close();
    await database?.close();
    await drop?.();
  });

  const expectProblem = async (res: Response, status: number) => {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  };

  for (const route of auditRoutes) {
    const access = route["x-permission"];
    const name = `${route.method.toUpperCase()} ${route.path}`;

    it(`${name}: 401 without an identity`, async () => {
      await expectProblem(await request(route, a), 401);
    });

    if (route.path.includes("{orgId}")) {
      it(`${name}: 404 for another organization, as for one that does not exist`, async () => {
        await expectProblem(await request(route, a, ownerB), 404);
        await expectProblem(await request(route, { ...a, orgId: "org_01nonexistent0000000000000" }, ownerB), 404);
      });
    }

    if (route.path.includes("{limitId}")) {
      it(`${name}: 404 for another organization's limit under one's own`, async () => {
        await expectProblem(await request(route, { ...b, orgId: a.orgId! }, owner), 404);
        await expectProblem(await request(route, { ...b, orgId: a.orgId!, limitId: "spl_nonexistent" }, owner), 404);
      });
    }

    if (access !== "authenticated" && access !== "public" && PERMISSIONS[access as Permission].minRole !== "viewer") {
      it(`${name}: 403 for a viewer`, async () => {
        await expectProblem(await request(route, a, viewer), 403);
      });
    }
  }

  it("refuses a limit on another organization's project as one on a project that does not exist", async () => {
    const theirs = await call("POST", `/v1/orgs/${a.orgId}/spending-limits`, owner, {
      amountUsd: 1,
      projectId: b.projectId,
    });
    const none = await call("POST", `/v1/orgs/${a.orgId}/spending-limits`, owner, {
      amountUsd: 1,
      projectId: "prj_01nonexistent0000000000000",
    });
    await expectProblem(theirs, 404);
    await expectProblem(none, 404);
    const [t, n] = [(await theirs.json()) as { title: string }, (await none.json()) as { title: string }];
    expect(t.title).toBe(n.title);
  });

  it("leaves another organization's limit as it was", async () => {
    const res = await call("GET", `/v1/orgs/${b.orgId}/spending-limits/${b.limitId}`, ownerB);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { amountUsd: number }).amountUsd).toBe(10);
  });
});
