import { internalResolveSessionRoute, type Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { signIdentity, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { startOidcProvider } from "@agentplane/testkit/oidc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startActivated } from "../../tenancy-svc/test/fixtures/harness.ts";
import { type AuditService, createAuditService } from "../src/app.ts";

const pg = await requirePostgres();
const CLIENT_ID = "agentplane-console";
const CLIENT_SECRET = "console-secret";

interface TrailRecord {
  action: string;
  orgId?: string;
  principal: { type: string; id: string };
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
}

// A console sign-in with the identity provider, from the tenancy callback through the bus into the
// audit trail an organization's admins read.
describe.skipIf(!pg.available)(`OIDC sign-ins in the organizations' audit trails${pg.reason}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let tenancy: Awaited<ReturnType<typeof startActivated>>;
  let audit: AuditService;
  let otherOrgId: string;
  let otherOwner: Principal;

  beforeAll(async () => {
    const created = await createTestDatabase("audit_sign_in");
    drop = created.drop;
    database = await openDatabase(created.url, { max: 5 });
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    const bus = new MemoryBus();
    tenancy = await startActivated(
      database,
      { oidc: { issuer: provider.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET } },
      { bus },
    );
    otherOwner = await tenancy.oidcUser("eve@example.test");
    const other = await tenancy.call("POST", "/v1/orgs", { as: otherOwner, body: { name: "Other" } });
    otherOrgId = (await json<{ id: string }>(other)).id;
    audit = await createAuditService({
      database,
      bus,
      keys: tenancy.keys,
      logger: silentLogger(),
      authorizer: tenancy.service.authorizer,
      config: { maintenance: false },
    });
  }, 60_000);
  afterAll(async () => {
    await audit?.close();
    await tenancy?.service.close();
    await database?.close();
    await drop?.();
    await provider?.close();
  });

  /** The browser's way through /sign-in/oidc and the provider back to the callback: the session's principal and id. */
  async function signIn(): Promise<{ principal: Principal; sessionId: string }> {
    const start = await tenancy.call("GET", "/sign-in/oidc?next=/");
    const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
    const back = await fetch(new URL(start.headers.get("location")!), { redirect: "manual" });
    const callback = new URL(back.headers.get("location")!);
    const done = await tenancy.call("GET", `${callback.pathname}${callback.search}`, { headers: { cookie } });
    expect(done.status).toBe(302);
    const secret = done.headers
      .getSetCookie()
      .find((c) => c.startsWith("agentplane_session=aps_"))!
      .split(";")[0]!
      .split("=")[1]!;
    const { principal } = await json<{ principal: Principal & { sessionId: string } }>(
      await tenancy.internal("POST", internalResolveSessionRoute.path, { secret }),
    );
    return { principal: { ...principal, sessionId: undefined } as Principal, sessionId: principal.sessionId };
  }

  async function trail(path: string, as: Principal): Promise<{ status: number; items: TrailRecord[] }> {
    await tenancy.settle();
    await audit.drain();
    const headers = new Headers({
      "x-agentplane-identity": await signIdentity(tenancy.keys, as, { audience: "audit" }),
    });
    const res = await audit.fetch(
      new Request(`http://audit.test${path}?action=session.signed_in&limit=500`, { headers }),
    );
    return { status: res.status, items: res.status === 200 ? (await json<{ items: TrailRecord[] }>(res)).items : [] };
  }

  it("shows a member's sign-in to their organization's admins, and to no other organization", async () => {
    provider.state.user = { sub: "pat-1", email: "pat@acme.test", emailVerified: true, name: "Pat Person" };
    // Before any membership the sign-in is the installation's.
    const first = await signIn();
    const installation = await trail("/v1/installation/audit-trail", tenancy.owner);
    expect(installation.items.find((r) => r.targetId === first.sessionId)).toMatchObject({
      principal: { type: "user", id: first.principal.id },
    });
    expect(installation.items.find((r) => r.targetId === first.sessionId)?.orgId).toBeUndefined();

    const invited = await json<{ id: string }>(
      await tenancy.call("POST", `/v1/orgs/${tenancy.orgId}/invitations`, {
        as: tenancy.owner,
        body: { email: "pat@acme.test", role: "member" },
      }),
    );
    const accepted = await tenancy.call("POST", `/v1/invitations/${invited.id}/accept`, { as: first.principal });
    expect(accepted.status).toBe(200);

    const second = await signIn();
    expect(second.principal.id).toBe(first.principal.id);
    const { status, items } = await trail(`/v1/orgs/${tenancy.orgId}/audit-trail`, tenancy.owner);
    expect(status).toBe(200);
    expect(items.filter((r) => r.targetId === second.sessionId)).toEqual([
      expect.objectContaining({
        action: "session.signed_in",
        orgId: tenancy.orgId,
        principal: expect.objectContaining({ type: "user", id: second.principal.id }),
        targetType: "session",
        targetId: second.sessionId,
        details: { method: "oidc", issuer: provider.url, userId: second.principal.id },
      }),
    ]);
    // The earlier sign-in, from before the membership, is not rewritten into the organization.
    expect(items.some((r) => r.targetId === first.sessionId)).toBe(false);

    const elsewhere = await trail(`/v1/orgs/${otherOrgId}/audit-trail`, otherOwner);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.items.some((r) => r.principal.id === second.principal.id)).toBe(false);
    // A member below admin does not read the trail at all.
    expect((await trail(`/v1/orgs/${tenancy.orgId}/audit-trail`, second.principal)).status).toBe(403);
  });

  it("records a sign-in once in each organization of a member of several", async () => {
    provider.state.user = { sub: "pat-1", email: "pat@acme.test", emailVerified: true, name: "Pat Person" };
    const { principal } = await signIn();
    const own = await json<{ id: string }>(
      await tenancy.call("POST", "/v1/orgs", { as: principal, body: { name: "Pat's" } }),
    );
    const { sessionId } = await signIn();
    for (const orgId of [tenancy.orgId, own.id]) {
      const { items } = await trail(`/v1/orgs/${orgId}/audit-trail`, orgId === own.id ? principal : tenancy.owner);
      const records = items.filter((r) => r.targetId === sessionId);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ orgId });
      // A record names its own organization only, never the member's others.
      expect(JSON.stringify(records[0])).not.toContain(orgId === own.id ? tenancy.orgId : own.id);
    }
    expect(
      (await trail("/v1/installation/audit-trail", tenancy.owner)).items.some((r) => r.targetId === sessionId),
    ).toBe(false);
  });
});
