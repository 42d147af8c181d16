import type { Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BOUND_CEDAR_BYTES, MAX_BOUND_STATEMENTS } from "../src/services/bound-size.ts";
import { type Harness, json, secondOrg, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

const statements = (n: number, filler = "") =>
  Array.from(
    { length: n },
    (_, i) =>
      `@id("r${i}") forbid(principal, action == Action::"sandbox:exec", resource) when { context.command == "${i}${filler}" };`,
  ).join("\n");

// Every decision runs over the statements bound where it lands, on the event loop every
// organization shares: what one organization binds in all is bounded.
describe.skipIf(!target.available)(`what an organization binds in all${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const policy = async (orgId: string, as: Principal, name: string, cedar: string) => {
    const res = await h.call("POST", `/v1/orgs/${orgId}/policies`, { as, body: { name, cedar } });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await json<{ id: string }>(res)).id;
  };
  const bind = (orgId: string, as: Principal, body: Record<string, unknown>) =>
    h.call("POST", `/v1/orgs/${orgId}/policy-bindings`, { as, body });
  const expectLimit = async (res: Response) => {
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await json(res)).toMatchObject({ type: expect.stringContaining("limit-exceeded") });
  };

  it("counts each binding's statements, with a policy update that latest bindings follow", async () => {
    const big = await policy(h.orgId, h.owner, "two-hundred", statements(200));
    const per = MAX_BOUND_STATEMENTS / 200;
    const bindings: string[] = [];
    for (let i = 0; i < per; i++) {
      const res = await bind(h.orgId, h.owner, { policyId: big });
      expect(res.status).toBe(201);
      bindings.push((await json<{ id: string }>(res)).id);
    }
    await expectLimit(await bind(h.orgId, h.owner, { policyId: big }));
    // Another organization binds as much as ever.
    const b = await secondOrg(h);
    const theirs = await policy(b.orgId, b.owner, "two-hundred", statements(200));
    expect((await bind(b.orgId, b.owner, { policyId: theirs })).status).toBe(201);

    expect((await h.call("DELETE", `/v1/orgs/${h.orgId}/policy-bindings/${bindings[0]}`, { as: h.owner })).status).toBe(
      204,
    );
    const small = await policy(h.orgId, h.owner, "one", statements(1));
    expect((await bind(h.orgId, h.owner, { policyId: small })).status).toBe(201);
    expect((await bind(h.orgId, h.owner, { policyId: small, version: 1 })).status).toBe(201);
    // Held: 800 + 1 (latest) + 1 (pinned to version 1). A new version counts for the latest binding only.
    const update = (n: number) =>
      h.call("PATCH", `/v1/orgs/${h.orgId}/policies/${small}`, { as: h.owner, body: { cedar: statements(n) } });
    await expectLimit(await update(MAX_BOUND_STATEMENTS - 800));
    expect((await update(MAX_BOUND_STATEMENTS - 801)).status).toBe(200);
  });

  it("counts the bytes of Cedar each binding binds", async () => {
    const b = await secondOrg(h, "owner-c@c.test");
    // 100 statements of about 2.5 KB: 250 KB a policy.
    const large = await policy(b.orgId, b.owner, "large", statements(100, "x".repeat(2400)));
    const per = Math.floor(MAX_BOUND_CEDAR_BYTES / 250_000);
    for (let i = 0; i < per; i++) expect((await bind(b.orgId, b.owner, { policyId: large })).status).toBe(201);
    await expectLimit(await bind(b.orgId, b.owner, { policyId: large }));
  });
});
