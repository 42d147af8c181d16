import { readFileSync } from "node:fs";
import type { DriftReport, EffectivePolicy } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireSandboxCurl, startUpstreams, type Upstreams } from "../../sandbox-svc/test/egress-fixture.ts";
import { eventually, type GovernedPlatform, startGovernedPlatform } from "./governance-harness.ts";
import { requireBwrap } from "./sandbox-harness.ts";

const bwrap = requireBwrap();
const curl = requireSandboxCurl();

/** The governance documentation's policy, with the registry's local stand-in in place of registry.npmjs.org. */
function readmePolicy(): string {
  const governance = readFileSync(new URL("../../../docs/governance.md", import.meta.url), "utf8");
  const cedar = /<<'CEDAR'\n([\s\S]*?)\nCEDAR/.exec(governance)?.[1];
  if (!cedar) throw new Error("docs/governance.md has no Cedar policy");
  return cedar.replace(/"registry\.npmjs\.org"/g, '"registry.test"').replace(/"\*\.npmjs\.org"/g, '"*.registry.test"');
}

interface AuditItem {
  action: string;
  outcome: string;
  targetId?: string;
  details?: Record<string, unknown>;
}

// "Done when": an admin follows docs/governance.md: writes the policy that lets
// agents run only git and npm and reach only the registry, binds it, sees it in the sandbox's
// effective policy, watches an exec and an egress attempt get denied with the rule id in the audit
// trail, and sees the older sandbox in drift once the policy changes under its egress proxy.
describe.skipIf(!bwrap.available || !curl.available)(
  `the governance walkthrough of docs/governance.md${bwrap.reason}${curl.reason}`,
  () => {
    let h: GovernedPlatform;
    let upstreams: Upstreams;
    let box: string;
    let policyId: string;
    let bindingId: string;
    const seen: string[] = [];

    beforeAll(async () => {
      upstreams = await startUpstreams("registry.test");
      upstreams.http.on("request", (req) => seen.push(`${req.headers.host}${req.url}`));
      const port = (upstreams.http.address() as { port: number }).port;
      h = await startGovernedPlatform({
        SANDBOX_EGRESS_HOST_MAP: JSON.stringify({
          "registry.test": `127.0.0.1:${port}`,
          "elsewhere.test": `127.0.0.1:${port}`,
        }),
      });
      // The older sandbox: running before any policy exists.
      const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, {
        name: "agent-box",
        start: true,
      });
      expect(created.status).toBe(201);
      box = created.body.id;
    }, 240_000);
    afterAll(async () => {
      await h?.close();
      await upstreams?.close();
    });

    const exec = (command: string[]) =>
      h.call<{ exitCode: number; stdout: string; stderr: string; ruleId?: string; type?: string }>(
        "POST",
        "/v1/shell/exec",
        { projectId: h.projectId, sandboxId: box, command, timeoutMs: 20_000 },
      );
    const trail = async (action: string) =>
      (await h.call<{ items: AuditItem[] }>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=${action}&limit=100`)).body
        .items ?? [];
    const drift = async () =>
      (await h.call<DriftReport>("GET", `/v1/orgs/${h.orgId}/policy-bindings/drift?refresh=true`)).body;

    it("writes and binds the policy, and reads it in the sandbox's effective policy", async () => {
      const policy = await h.call<{ id: string; version: number; rules: { id: string }[] }>(
        "POST",
        `/v1/projects/${h.projectId}/policies`,
        { name: "agents", cedar: readmePolicy() },
      );
      expect(policy.status).toBe(201);
      expect(policy.body.rules.map((r) => r.id)).toEqual(["only-git-npm", "npm-registry"]);
      policyId = policy.body.id;
      const binding = await h.call<{ id: string; mode: string }>(
        "POST",
        `/v1/projects/${h.projectId}/policy-bindings`,
        {
          policyId,
        },
      );
      expect(binding.status).toBe(201);
      expect(binding.body.mode).toBe("enforce");
      bindingId = binding.body.id;

      const effective = await h.call<EffectivePolicy>(
        "GET",
        `/v1/projects/${h.projectId}/sandboxes/${box}/effective-policy`,
      );
      expect(effective.status).toBe(200);
      expect(effective.body.bindings).toEqual([expect.objectContaining({ bindingId, policyId, version: 1 })]);
      expect(effective.body.actions.find((a) => a.action === "sandbox:exec")).toMatchObject({
        decision: "conditional",
        ruleIds: ["only-git-npm"],
      });
      expect(effective.body.actions.find((a) => a.action === "sandbox:create")).toMatchObject({
        decision: "allow",
        governed: false,
      });
      expect(effective.body.egress).toEqual({
        access: "listed",
        allowedHosts: ["*.registry.test", "registry.test"],
        deniedHosts: [],
      });
    });

    it("denies an exec and an egress attempt, with the rule id in the audit trail", async () => {
      const denied = await eventually(
        () => exec(["curl", "--version"]),
        (r) => r.status === 403,
      );
      expect(denied.status).toBe(403);
      expect(denied.body.ruleId).toBe("only-git-npm");

      // git may reach the registry; anything else is refused by the proxy, by rule.
      await eventually(
        () => exec(["git", "ls-remote", "http://registry.test/agent/tools.git"]),
        () => seen.some((s) => s.startsWith("registry.test/agent/tools.git")),
      );
      expect(seen.some((s) => s.startsWith("registry.test/agent/tools.git"))).toBe(true);
      const elsewhere = await exec(["git", "ls-remote", "http://elsewhere.test/agent/tools.git"]);
      expect(elsewhere.body.stderr).toMatch(/403/);
      expect(seen.some((s) => s.startsWith("elsewhere.test"))).toBe(false);

      const denials = await eventually(
        () => trail("policy.denied"),
        (items) =>
          items.some((i) => i.details?.governedAction === "sandbox:exec") &&
          items.some((i) => i.details?.governedAction === "sandbox:egress"),
      );
      expect(denials.find((i) => i.details?.governedAction === "sandbox:exec")).toMatchObject({
        outcome: "denied",
        details: { ruleId: "only-git-npm", bindingId, mode: "enforce" },
      });
      expect(denials.find((i) => i.details?.governedAction === "sandbox:egress")).toMatchObject({
        outcome: "denied",
        details: { ruleId: "npm-registry", bindingId, mode: "enforce", host: "elsewhere.test" },
      });
      const refused = await eventually(
        () => trail("sandbox.egress_denied"),
        (items) => items.some((i) => i.details?.host === "elsewhere.test"),
      );
      expect(refused.find((i) => i.details?.host === "elsewhere.test")).toMatchObject({
        targetId: box,
        details: { ruleId: "npm-registry", policies: [{ bindingId, policyId, version: 1 }] },
      });
    }, 120_000);

    it("sees the older sandbox in drift while its egress proxy holds the previous policy version", async () => {
      expect((await drift()).items.filter((e) => e.target.id === box)).toEqual([]);
      // The registry moves: version 2. The running sandbox's proxy last decided under version 1.
      const updated = await h.call("PATCH", `/v1/projects/${h.projectId}/policies/${policyId}`, {
        cedar: readmePolicy().replace(/"registry\.test"/g, '"mirror.test"'),
        reason: "registry moved to the mirror",
      });
      expect(updated.status).toBe(200);
      const report = await drift();
      expect(report.items).toContainEqual(
        expect.objectContaining({
          reason: "egress-version",
          bindingId,
          policyId,
          version: 1,
          latestVersion: 2,
          action: "sandbox:egress",
          target: { kind: "sandbox", id: box, projectId: h.projectId },
        }),
      );
      expect(report.totals.egressProxies).toBe(1);

      // Its next connection is decided under version 2 (refused now): the proxy holds the latest.
      await eventually(
        async () => {
          await exec(["git", "ls-remote", "http://registry.test/agent/again.git"]);
          return drift();
        },
        (r) => !r.items.some((e) => e.reason === "egress-version"),
      );
      const after = await drift();
      expect(after.items.filter((e) => e.reason === "egress-version")).toEqual([]);
      expect(after.totals.egressProxies).toBe(0);
      expect(seen.some((s) => s.startsWith("registry.test/agent/again.git"))).toBe(false);
    }, 120_000);
  },
);
