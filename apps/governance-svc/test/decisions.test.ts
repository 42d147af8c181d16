import {
  type DecisionRequest,
  type DecisionResponse,
  internalDecideRoute,
  type Principal,
} from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

const GIT_NPM = `@id("only-git-npm")
permit(principal, action == Action::"sandbox:exec", resource) when { ["git", "npm"].contains(context.program) };`;
const NO_RM = `@id("allow-exec")
permit(principal, action == Action::"sandbox:exec", resource);
@id("no-rm")
forbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "rm" };`;
const NO_CURL = `@id("no-curl")
forbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "curl" };`;

describe.skipIf(!target.available)(`decision semantics on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;
  let agent: Principal;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectId = await h.project("agents");
    agent = { type: "sandbox", id: "sbt_agent", orgId: h.orgId, projectId, sandboxId: "sbx_a" };
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const ask = async (
    action: DecisionRequest["action"],
    context: Record<string, unknown>,
    resource: Partial<DecisionRequest["resource"]> = {},
  ): Promise<DecisionResponse> => {
    const res = await h.internal(internalDecideRoute.path, {
      principal: agent,
      action,
      resource: { type: "Sandbox", id: "sbx_a", orgId: h.orgId, projectId, kind: "sandbox", ...resource },
      context,
    });
    expect(res.status).toBe(200);
    return json<DecisionResponse>(res);
  };
  const policy = async (name: string, cedar: string) =>
    (
      await json<{ id: string }>(
        await h.call("POST", `/v1/projects/${projectId}/policies`, { as: h.owner, body: { name, cedar } }),
      )
    ).id;
  const bind = async (body: Record<string, unknown>) => {
    const res = await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, { as: h.owner, body });
    expect(res.status).toBe(201);
    return (await json<{ id: string }>(res)).id;
  };
  const unbind = (id: string) => h.call("DELETE", `/v1/projects/${projectId}/policy-bindings/${id}`, { as: h.owner });

  it("answers only service identities", async () => {
    const res = await h.call("POST", internalDecideRoute.path, {
      as: h.owner,
      body: { principal: agent, action: "sandbox:exec", resource: { type: "Sandbox", id: "x", orgId: h.orgId } },
    });
    expect(res.status).toBe(403);
    const anonymous = await h.call("POST", internalDecideRoute.path, { body: {} });
    expect(anonymous.status).toBe(401);
  });

  it("rejects an unknown action or entity type with 400", async () => {
    const base = { principal: agent, resource: { type: "Sandbox", id: "x", orgId: h.orgId }, context: {} };
    expect((await h.internal(internalDecideRoute.path, { ...base, action: "sandbox:fly" })).status).toBe(400);
    const entity = await h.internal(internalDecideRoute.path, {
      ...base,
      action: "sandbox:exec",
      resource: { type: "Spaceship", id: "x", orgId: h.orgId },
    });
    expect(entity.status).toBe(400);
  });

  it("allows every action while nothing is bound", async () => {
    expect(await ask("sandbox:exec", { argv: ["curl", "x"] })).toMatchObject({ decision: "allow", reasons: [] });
  });

  it("decides by the table: default deny within the bound set, unbound actions allowed, dryrun reported", async () => {
    const gitNpm = await bind({ policyId: await policy("git-npm", GIT_NPM) });
    const table: [string, DecisionRequest["action"], Record<string, unknown>, "allow" | "deny", string?][] = [
      ["permitted program", "sandbox:exec", { argv: ["/usr/bin/git", "status"] }, "allow"],
      ["other program: no permit applies", "sandbox:exec", { argv: ["curl", "example.test"] }, "deny", "only-git-npm"],
      ["action no binding covers", "sandbox:create", { image: "node:22" }, "allow"],
      ["egress not governed yet", "sandbox:egress", { host: "registry.npmjs.org", port: 443 }, "allow"],
    ];
    for (const [name, action, context, decision, ruleId] of table) {
      const answer = await ask(action, context);
      expect(answer.decision, name).toBe(decision);
      if (ruleId) {
        expect(answer.enforced, name).toBe(true);
        expect(answer.reasons[0], name).toMatchObject({ ruleId, bindingId: gitNpm, mode: "enforce", version: 1 });
      }
    }
    expect((await unbind(gitNpm)).status).toBe(204);
    expect((await ask("sandbox:exec", { argv: ["curl"] })).decision).toBe("allow");
  });

  it("forbid beats permit, and the audit record names the rule, binding and mode", async () => {
    const binding = await bind({ policyId: await policy("no-rm", NO_RM) });
    expect((await ask("sandbox:exec", { argv: ["ls"] })).decision).toBe("allow");
    const denied = await ask("sandbox:exec", { argv: ["rm", "-rf", "/"] });
    expect(denied).toMatchObject({ decision: "deny", enforced: true });
    expect(denied.reasons).toEqual([
      expect.objectContaining({ ruleId: "no-rm", bindingId: binding, mode: "enforce", forbid: true }),
    ]);
    const record = await vi.waitFor(async () => {
      await h.settle();
      const found = h.audit.find((r) => r.action === "policy.denied" && r.details?.ruleId === "no-rm");
      if (!found) throw new Error("no denial record yet");
      return found;
    });
    expect(record).toMatchObject({ outcome: "denied", orgId: h.orgId, projectId, targetId: "sbx_a" });
    expect(record?.details).toMatchObject({ bindingId: binding, mode: "enforce", governedAction: "sandbox:exec" });
    // Allows are counted, never audited one by one.
    expect(h.audit.filter((r) => r.action === "policy.allowed")).toEqual([]);
    expect(h.governance.context.counters.allow).toBeGreaterThan(0);
    await unbind(binding);
  });

  it("dryrun: the would-deny is answered as not enforced and audited; the request proceeds", async () => {
    const allow = await bind({ policyId: await policy("allow-all-exec", NO_RM) });
    const dryrun = await bind({ policyId: await policy("no-curl", NO_CURL), mode: "dryrun" });
    const answer = await ask("sandbox:exec", { argv: ["curl", "x"] });
    expect(answer).toMatchObject({ decision: "deny", enforced: false });
    expect(answer.reasons).toEqual([expect.objectContaining({ ruleId: "no-curl", bindingId: dryrun, mode: "dryrun" })]);
    expect((await ask("sandbox:exec", { argv: ["ls"] })).decision).toBe("allow");
    const record = await vi.waitFor(async () => {
      await h.settle();
      const found = h.audit.find((r) => r.action === "policy.dryrun_denied");
      if (!found) throw new Error("no dryrun record yet");
      return found;
    });
    expect(record?.details).toMatchObject({ ruleId: "no-curl", bindingId: dryrun, mode: "dryrun" });
    await unbind(allow);
    await unbind(dryrun);
  });

  it("a pinned binding keeps its version while a latest binding follows the policy", async () => {
    const id = await policy("pinning", GIT_NPM);
    const pinned = await bind({ policyId: id, version: 1, target: { kind: "sandbox", selector: "pin=yes" } });
    const latest = await bind({ policyId: id, target: { kind: "sandbox", selector: "pin=no" } });
    const v2 = await h.call("PATCH", `/v1/projects/${projectId}/policies/${id}`, {
      as: h.owner,
      body: { cedar: GIT_NPM.replace('"npm"', '"make"') },
    });
    expect(v2.status).toBe(200);
    const npm = { argv: ["npm", "ci"] };
    expect((await ask("sandbox:exec", npm, { labels: { pin: "yes" } })).decision).toBe("allow");
    const followed = await ask("sandbox:exec", npm, { labels: { pin: "no" } });
    expect(followed).toMatchObject({ decision: "deny", reasons: [expect.objectContaining({ version: 2 })] });
    // A sandbox the selectors do not match is not governed by either.
    expect((await ask("sandbox:exec", npm, { labels: { pin: "maybe" } })).decision).toBe("allow");
    await unbind(pinned);
    await unbind(latest);
  });

  it("an org binding narrowed to projects reaches only those", async () => {
    const other = await h.project("elsewhere");
    const orgPolicy = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/policies`, { as: h.owner, body: { name: "org-git", cedar: GIT_NPM } }),
    );
    const res = await h.call("POST", `/v1/orgs/${h.orgId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: orgPolicy.id, target: { projectIds: [other] } },
    });
    expect(res.status).toBe(201);
    expect((await ask("sandbox:exec", { argv: ["curl"] })).decision).toBe("allow");
    expect((await ask("sandbox:exec", { argv: ["curl"] }, { projectId: other })).decision).toBe("deny");
  });
});
