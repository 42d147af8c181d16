import {
  type DecisionRequest,
  type DecisionResponse,
  internalDecideRoute,
  type Principal,
} from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, secondOrg, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

// An organization's policies decide for its own resources only, whatever entities they name.
describe.skipIf(!target.available)(`another organization's policy on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectA: string;
  let agentA: Principal;
  let b: { owner: Principal; orgId: string };
  let projectB: string;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectA = await h.project("a");
    agentA = { type: "sandbox", id: "sbt_a", orgId: h.orgId, projectId: projectA, sandboxId: "sbx_a" };
    b = await secondOrg(h);
    projectB = await h.project("b", b.orgId, b.owner);
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const ask = async (orgId: string, projectId: string, principal: Principal): Promise<DecisionResponse> => {
    const request: DecisionRequest = {
      principal,
      action: "sandbox:exec",
      resource: { type: "Sandbox", id: "sbx_a", orgId, projectId, kind: "sandbox" },
      context: { argv: ["ls"] },
    };
    const res = await h.internal(internalDecideRoute.path, request);
    expect(res.status).toBe(200);
    return json<DecisionResponse>(res);
  };

  it("names A's organization, project, sandbox and agent without changing A's decisions", async () => {
    const cedar = `@id("all-of-a")
forbid(principal, action, resource in Organization::"${h.orgId}");
@id("project-of-a")
forbid(principal, action, resource in Project::"${projectA}");
@id("sandbox-of-a")
forbid(principal == SandboxToken::"sbt_a", action, resource == Sandbox::"sbx_a");`;
    const policy = await h.call("POST", `/v1/orgs/${b.orgId}/policies`, {
      as: b.owner,
      body: { name: "hostile", cedar },
    });
    expect(policy.status).toBe(201);
    const { id } = await json<{ id: string }>(policy);
    const bound = await h.call("POST", `/v1/orgs/${b.orgId}/policy-bindings`, { as: b.owner, body: { policyId: id } });
    expect(bound.status).toBe(201);
    expect(await ask(h.orgId, projectA, agentA)).toMatchObject({ decision: "allow", reasons: [], policies: [] });
    // In B the same statements decide (the agent and sandbox ids are B's to name too).
    const inB = await ask(b.orgId, projectB, { ...agentA, orgId: b.orgId, projectId: projectB });
    expect(inB.decision).toBe("deny");
    expect(inB.reasons.map((r) => r.ruleId)).toEqual(["sandbox-of-a"]);
  });

  it("cannot bind A's policy in B, which answers as for a policy that does not exist", async () => {
    const mine = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/policies`, {
        as: h.owner,
        body: { name: "a-policy", cedar: `@id("r") permit(principal, action == Action::"sandbox:exec", resource);` },
      }),
    );
    for (const path of [`/v1/orgs/${b.orgId}/policy-bindings`, `/v1/projects/${projectB}/policy-bindings`]) {
      const theirs = await h.call("POST", path, { as: b.owner, body: { policyId: mine.id } });
      const none = await h.call("POST", path, { as: b.owner, body: { policyId: "pol_01nonexistent0000000000000" } });
      expect(theirs.status, path).toBe(404);
      expect(none.status, path).toBe(404);
      expect(theirs.headers.get("content-type")).toContain("application/problem+json");
      const [t, n] = [await json<{ title: string }>(theirs), await json<{ title: string }>(none)];
      expect(t.title).toBe(n.title);
    }
  });
});
