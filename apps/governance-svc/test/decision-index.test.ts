import {
  type DecisionRequest,
  type DecisionResponse,
  internalDecideRoute,
  type Principal,
} from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cedarCall } from "../src/cedar/request.ts";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

// Statements the engine indexes by a guard (== on a context attribute, a literal set's contains,
// either inside &&) and statements it cannot index (unless, like, ||, tags): every mix must decide
// exactly as Cedar does over the whole set.
const MIXED = `@id("git") permit(principal, action == Action::"sandbox:exec", resource) when { context.program == "git" };
@id("npm-no-tty") permit(principal, action == Action::"sandbox:exec", resource) when { !context.tty && context.program == "npm" };
@id("make-or-cc") permit(principal, action == Action::"sandbox:exec", resource) when { ["make", "cc"].contains(context.program) };
@id("py-prefix") permit(principal, action == Action::"sandbox:exec", resource) when { context.program like "python*" };
@id("ls-or-cat") permit(principal, action == Action::"sandbox:exec", resource) when { context.program == "ls" || context.program == "cat" };
@id("no-git-push") forbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "git" && context.args.contains("push") };
@id("no-tty-make") forbid(principal, action == Action::"sandbox:exec", resource) when { context.tty == true && context.program == "make" };
@id("locked") forbid(principal, action == Action::"sandbox:exec", resource) when { resource.hasTag("locked") };
@id("interactive-only-ls") forbid(principal, action == Action::"sandbox:exec", resource) unless { !context.tty || context.program == "ls" };
@id("registry") permit(principal, action == Action::"sandbox:egress", resource) when { context.host == "registry.test" && context.port == 443 };`;

const PROGRAMS = ["git", "npm", "make", "cc", "python3", "ls", "cat", "rm", ""];
const ARGS = [[], ["push"], ["status"]];

describe.skipIf(!target.available)(`the decision index on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;
  let agent: Principal;
  let bindingId: string;
  let policyId: string;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectId = await h.project("agents");
    agent = { type: "sandbox", id: "sbt_agent", orgId: h.orgId, projectId, sandboxId: "sbx_a" };
    const policy = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policies`, {
        as: h.owner,
        body: { name: "mixed", cedar: MIXED },
      }),
    );
    policyId = policy.id;
    const binding = await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, {
      as: h.owner,
      body: { policyId },
    });
    bindingId = (await json<{ id: string }>(binding)).id;
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  }, 120_000);

  const request = (action: DecisionRequest["action"], context: Record<string, unknown>, labels = {}) => ({
    principal: agent,
    action,
    resource: { type: "Sandbox", id: "sbx_a", orgId: h.orgId, projectId, kind: "sandbox", labels },
    context,
  });
  /** Cedar itself over every statement of the policy, with the request's entities. */
  const reference = (r: DecisionRequest) => {
    const call = cedarCall(r);
    const statements = Object.fromEntries(MIXED.split("\n").map((text, i) => [`s${i}`, text]));
    const answer = cedar.isAuthorized({
      principal: call.principal,
      action: call.action,
      resource: call.resource,
      context: call.context,
      policies: { staticPolicies: statements },
      entities: call.entities,
    });
    if (answer.type !== "success") throw new Error(answer.errors.map((e) => e.message).join("; "));
    return answer.response.decision;
  };

  it("decides every combination exactly as Cedar over the whole policy set", async () => {
    let checked = 0;
    for (const program of PROGRAMS) {
      for (const args of ARGS) {
        for (const tty of [false, true]) {
          for (const labels of [{}, { locked: "yes" }]) {
            const r = request("sandbox:exec", { argv: program ? [program, ...args] : [], tty }, labels);
            const res = await h.internal(internalDecideRoute.path, r);
            expect(res.status).toBe(200);
            const answer = await json<DecisionResponse>(res);
            expect(answer.decision, JSON.stringify(r.context) + JSON.stringify(labels)).toBe(reference(r));
            checked++;
          }
        }
      }
    }
    expect(checked).toBe(PROGRAMS.length * ARGS.length * 4);
    for (const [host, port] of [
      ["registry.test", 443],
      ["registry.test", 80],
      ["elsewhere.test", 443],
    ] as const) {
      const r = request("sandbox:egress", { host, port });
      const answer = await json<DecisionResponse>(await h.internal(internalDecideRoute.path, r));
      expect(answer.decision, `${host}:${port}`).toBe(reference(r));
    }
  });

  it("names the deciding rules and the policy versions it evaluated", async () => {
    const pushed = await json<DecisionResponse>(
      await h.internal(internalDecideRoute.path, request("sandbox:exec", { argv: ["git", "push"] })),
    );
    expect(pushed.reasons).toEqual([expect.objectContaining({ ruleId: "no-git-push", bindingId })]);
    // No permit applies to rm: the permits of the action are named, whatever the index left out.
    const rm = await json<DecisionResponse>(
      await h.internal(internalDecideRoute.path, request("sandbox:exec", { argv: ["rm"] })),
    );
    expect(rm.reasons.map((r) => r.ruleId).sort()).toEqual([
      "git",
      "ls-or-cat",
      "make-or-cc",
      "npm-no-tty",
      "py-prefix",
    ]);
    expect(rm.policies).toEqual([{ bindingId, policyId, version: 1, mode: "enforce" }]);
    const allowed = await json<DecisionResponse>(
      await h.internal(internalDecideRoute.path, request("sandbox:exec", { argv: ["git", "status"] })),
    );
    expect(allowed).toMatchObject({ decision: "allow", policies: [{ bindingId, policyId, version: 1 }] });
  });
});
