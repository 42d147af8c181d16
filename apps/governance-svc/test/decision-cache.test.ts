import type { DecisionRequest, Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { DecisionCache, inProcessFetch, ServiceClient } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Harness, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

const NO_RM = `@id("allow-exec")
permit(principal, action == Action::"sandbox:exec", resource);
@id("no-rm")
forbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "rm" };`;

describe.skipIf(!target.available)(`DecisionCache against governance${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;
  let agent: Principal;
  let client: ServiceClient;
  let calls = 0;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectId = await h.project("cached");
    agent = { type: "sandbox", id: "sbt_cache", orgId: h.orgId, projectId, sandboxId: "sbx_c" };
    const fetchGovernance = inProcessFetch(h.governance);
    client = new ServiceClient(
      "governance",
      async (request) => {
        calls++;
        return fetchGovernance(request);
      },
      h.keys,
    );
    const policy = await h.call("POST", `/v1/projects/${projectId}/policies`, {
      as: h.owner,
      body: { name: "no-rm", cedar: NO_RM },
    });
    const { id } = (await policy.json()) as { id: string };
    const bound = await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: id },
    });
    expect(bound.status).toBe(201);
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const request = (program: string): DecisionRequest => ({
    principal: agent,
    action: "sandbox:exec",
    resource: { type: "Sandbox", id: "sbx_c", orgId: h.orgId, projectId, kind: "sandbox" },
    context: { program, argv: [program] },
  });

  it("reuses an allow for its lifetime and shares one call between identical requests in flight", async () => {
    let now = 1_000_000;
    const cache = new DecisionCache({ callerService: "sandbox", ttlMs: 1000, clock: { now: () => now } });
    const before = calls;
    const [a, b] = await Promise.all([cache.decide(client, request("ls")), cache.decide(client, request("ls"))]);
    expect(a.decision).toBe("allow");
    expect(b).toBe(a);
    expect(calls - before).toBe(1);
    expect((await cache.decide(client, request("ls"))).decision).toBe("allow");
    expect(calls - before).toBe(1);
    // Another context is another question.
    await cache.decide(client, request("cat"));
    expect(calls - before).toBe(2);
    now += 1001;
    await cache.decide(client, request("ls"));
    expect(calls - before).toBe(3);
  });

  it("asks again for every deny, so each one is decided and audited", async () => {
    const cache = new DecisionCache({ callerService: "sandbox" });
    const before = calls;
    for (let i = 0; i < 3; i++) {
      const answer = await cache.decide(client, request("rm"));
      expect(answer).toMatchObject({ decision: "deny", enforced: true });
      expect(answer.reasons[0]?.ruleId).toBe("no-rm");
    }
    expect(calls - before).toBe(3);
    const denials = await vi.waitFor(async () => {
      await h.settle();
      const found = h.audit.filter((r) => r.action === "policy.denied" && r.details?.ruleId === "no-rm");
      if (found.length < 3) throw new Error(`${found.length} denial records so far`);
      return found;
    });
    expect(denials).toHaveLength(3);
  });

  it("does not keep a failed call", async () => {
    const cache = new DecisionCache({ callerService: "sandbox" });
    const broken = new ServiceClient(
      "governance",
      async () => new Response("down", { status: 503, headers: { "retry-after": "1" } }),
      h.keys,
    );
    await expect(cache.decide(broken, request("ls"))).rejects.toThrow();
    const before = calls;
    expect((await cache.decide(client, request("ls"))).decision).toBe("allow");
    expect(calls - before).toBe(1);
  });
});
