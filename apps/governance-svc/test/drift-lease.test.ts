import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acquireLease } from "../src/services/drift.ts";
import { type Harness, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

// Effective policy and drift over real sandboxes: apps/platform/test/governance-effective-drift.test.ts
// and governance-walkthrough.test.ts (the platform's sandbox service answers governance's queries).
describe.skipIf(!target.available)(`drift access and its audit lease on postgres${target.reason}`, () => {
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

  it("drift is for org admins; the background audit runs on one replica at a time", async () => {
    const member = await h.member("member@a.test", "member");
    expect((await h.call("GET", `/v1/orgs/${h.orgId}/policy-bindings/drift`, { as: member })).status).toBe(403);
    expect((await h.call("GET", `/v1/orgs/${h.orgId}/policy-bindings/drift`, { as: h.owner })).status).toBe(200);
    const db = h.governance.context.db;
    expect(await acquireLease(db, "drift-test", "replica-a", 5000)).toBe(true);
    expect(await acquireLease(db, "drift-test", "replica-b", 5000)).toBe(false);
    expect(await acquireLease(db, "drift-test", "replica-a", 5000)).toBe(true);
  });
});
