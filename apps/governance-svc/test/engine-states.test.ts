import type { Principal } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GOVERNANCE_SCHEMA } from "../src/app.ts";
import type { GovernanceDb } from "../src/db/schema.ts";
import { DecisionEngine } from "../src/engine/decision-engine.ts";
import { type Harness, json, secondOrg, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

// 100 statements of about 1 KB: 100 KB of Cedar in an organization's state.
const LARGE = Array.from(
  { length: 100 },
  (_, i) =>
    `@id("r${i}") forbid(principal, action == Action::"sandbox:exec", resource) when { context.command == "${i}${"x".repeat(1000)}" };`,
).join("\n");

// Every organization that decided kept its state in the engine for as long as the process ran.
describe.skipIf(!target.available)(`the organizations' states the engine keeps${target.reason}`, () => {
  let h: Harness;
  let database: Database;
  let cleanup: () => Promise<void>;
  const orgs: string[] = [];

  beforeAll(async () => {
    const opened = await target.open();
    database = opened.database;
    cleanup = opened.cleanup;
    h = await startHarness(database);
    const bindLarge = async (orgId: string, as: Principal) => {
      const policy = await h.call("POST", `/v1/orgs/${orgId}/policies`, { as, body: { name: "large", cedar: LARGE } });
      expect(policy.status).toBe(201);
      const { id } = await json<{ id: string }>(policy);
      expect((await h.call("POST", `/v1/orgs/${orgId}/policy-bindings`, { as, body: { policyId: id } })).status).toBe(
        201,
      );
    };
    await bindLarge(h.orgId, h.owner);
    const b = await secondOrg(h);
    await bindLarge(b.orgId, b.owner);
    orgs.push(h.orgId, b.orgId);
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const engineOf = (stateMaxChars: number) =>
    new DecisionEngine(database.forSchema<GovernanceDb>(GOVERNANCE_SCHEMA), silentLogger(), { stateMaxChars });

  it("drops the least recently used past its bound, and decides the same after a reload", async () => {
    const [a, b] = orgs as [string, string];
    const small = engineOf(150_000);
    const first = await small.state(a);
    await small.state(a);
    await small.state(b);
    const again = await small.state(a);
    expect(again).not.toBe(first);
    expect(again.bindings.map((x) => x.id)).toEqual(first.bindings.map((x) => x.id));
    const answer = await small.decide({
      principal: { type: "user", id: "usr_x" },
      action: "sandbox:exec",
      resource: { type: "Sandbox", id: "sbx", orgId: a },
      context: { argv: ["echo"], command: `7${"x".repeat(1000)}` },
    });
    expect(answer).toMatchObject({ decision: "deny", reasons: [{ ruleId: "r7" }] });

    // Within the bound both stay.
    const roomy = engineOf(1_000_000);
    const kept = await roomy.state(a);
    await roomy.state(a);
    await roomy.state(b);
    expect(await roomy.state(a)).toBe(kept);
  });
});
