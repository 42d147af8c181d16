import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GovernedPlatform, startGovernedPlatform } from "./governance-harness.ts";
import { requireBwrap } from "./sandbox-harness.ts";

const bwrap = requireBwrap();

interface Decision {
  decision: string;
  reasons: { ruleId: string }[];
  principal: { type: string; id: string; displayName?: string };
}

// "Would this be allowed?" for a sandbox's own identity: sandbox-svc names the sandbox to governance.
describe.skipIf(!bwrap.available)(`a decision asked for a sandbox of the project${bwrap.reason}`, () => {
  let h: GovernedPlatform;
  let sandboxId: string;

  beforeAll(async () => {
    h = await startGovernedPlatform();
    const made = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, { name: "asker" });
    expect(made.status).toBe(201);
    sandboxId = made.body.id;
    const cedar = `@id("allow-egress")
permit(principal, action == Action::"sandbox:egress", resource);
@id("sandboxes-stay-home")
forbid(principal is SandboxToken, action == Action::"sandbox:egress", resource) when { context.host == "example.com" };`;
    const policy = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policies`, {
      name: "home",
      cedar,
    });
    expect(policy.status).toBe(201);
    const bound = await h.call("POST", `/v1/projects/${h.projectId}/policy-bindings`, { policyId: policy.body.id });
    expect(bound.status).toBe(201);
  }, 240_000);
  afterAll(async () => {
    await h?.close();
  });

  const ask = (principal?: { type: string; id: string }) =>
    h.call<Decision>("POST", `/v1/projects/${h.projectId}/policy-decisions`, {
      action: "sandbox:egress",
      resource: { type: "Host", id: "example.com" },
      context: { host: "example.com", port: 443 },
      ...(principal ? { principal } : {}),
    });

  it("decides as the sandbox when asked for it, and as the caller otherwise", async () => {
    const forSandbox = await ask({ type: "sandbox", id: sandboxId });
    expect(forSandbox.status).toBe(200);
    expect(forSandbox.body).toMatchObject({
      decision: "deny",
      principal: { type: "sandbox", id: sandboxId, displayName: "asker" },
    });
    expect(forSandbox.body.reasons.map((r) => r.ruleId)).toEqual(["sandboxes-stay-home"]);
    expect((await ask()).body.decision).toBe("allow");
    const unknown = await ask({ type: "sandbox", id: "sbx_00000000000000000000000000" });
    expect(unknown.status).toBe(404);
  });
});
