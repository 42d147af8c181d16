import type { DriftReport, EffectivePolicy } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type GovernedPlatform, startGovernedPlatform } from "./governance-harness.ts";
import { requireBwrap } from "./sandbox-harness.ts";

const bwrap = requireBwrap();

// The platform's own sandbox service answers governance's sandbox queries: sandboxes made through
// the API, with their labels and ports as sandbox-svc stores them.
const AGENTS = `@id("only-git-npm")
permit(principal, action == Action::"sandbox:exec", resource) when { ["git", "npm"].contains(context.program) };
@id("npm-registry")
permit(principal, action == Action::"sandbox:egress", resource)
when { context.host == "registry.npmjs.org" || context.host like "*.npmjs.org" };
@id("allow-lifecycle")
permit(principal, action in [Action::"sandbox:create", Action::"sandbox:update", Action::"sandbox:start", Action::"sandbox:expose-port"], resource);
@id("no-public-web")
forbid(principal, action == Action::"sandbox:create", resource) when { context.publicPorts.contains(8080) };
@id("no-public-ports")
forbid(principal, action == Action::"sandbox:expose-port", resource) when { context.visibility == "public" };`;

describe.skipIf(!bwrap.available)(`effective policy and drift against the platform's sandboxes${bwrap.reason}`, () => {
  let h: GovernedPlatform;
  let older: string;
  let newer: string;

  beforeAll(async () => {
    h = await startGovernedPlatform();
    const made = async (body: Record<string, unknown>) => {
      const r = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, body);
      expect(r.status).toBe(201);
      return r.body.id;
    };
    // Made before any policy: a public web port, and a label the frozen binding selects.
    older = await made({ name: "old", labels: { team: "ml" }, ports: [{ port: 8080, visibility: "public" }] });
    newer = await made({ name: "new" });
  }, 240_000);
  afterAll(async () => {
    await h?.close();
  });

  const effective = async (sandboxId: string) =>
    h.call<EffectivePolicy>("GET", `/v1/projects/${h.projectId}/sandboxes/${sandboxId}/effective-policy`);
  const action = (p: EffectivePolicy, name: string) => p.actions.find((a) => a.action === name);
  const policy = async (name: string, cedar: string) => {
    const r = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policies`, { name, cedar });
    expect(r.status).toBe(201);
    return r.body.id;
  };
  const bind = async (body: Record<string, unknown>) => {
    const r = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policy-bindings`, body);
    expect(r.status).toBe(201);
    return r.body.id;
  };

  it("reports every sandbox action ungoverned before anything is bound, egress closed", async () => {
    const { status, body } = await effective(newer);
    expect(status).toBe(200);
    expect(body.bindings).toEqual([]);
    expect(body.actions.every((a) => !a.governed)).toBe(true);
    // Ungoverned actions are allowed, but egress is closed until a policy permits hosts: the egress
    // proxy refuses every destination then, and the summary must not claim otherwise.
    const decisions = Object.fromEntries(body.actions.map((a) => [a.action, a.decision]));
    expect(decisions).toMatchObject({ "sandbox:exec": "allow", "sandbox:create": "allow", "sandbox:egress": "deny" });
    expect(body.egress).toEqual({ access: "none", allowedHosts: [], deniedHosts: [] });
  });

  it("summarizes each action by Cedar's residuals: conditional on the rules that decide it, deny for a plain forbid", async () => {
    const agents = await bind({ policyId: await policy("agents", AGENTS) });
    const frozen = await policy(
      "frozen",
      `@id("frozen") forbid(principal, action == Action::"sandbox:start", resource);`,
    );
    await bind({ policyId: frozen, target: { kind: "sandbox", selector: "team=ml" } });

    const { body } = await effective(newer);
    expect(body.bindings).toEqual([
      expect.objectContaining({ bindingId: agents, version: 1, mode: "enforce", pinned: false }),
    ]);
    // The permit depends on the command: conditional, decided by that rule alone.
    expect(action(body, "sandbox:exec")).toMatchObject({
      decision: "conditional",
      governed: true,
      ruleIds: ["only-git-npm"],
    });
    expect(action(body, "sandbox:start")).toMatchObject({ decision: "allow", ruleIds: ["allow-lifecycle"] });
    // A forbid on the request's ports against an unconditional permit: both may decide.
    expect(action(body, "sandbox:create")?.decision).toBe("conditional");
    expect(action(body, "sandbox:create")?.ruleIds.sort()).toEqual(["allow-lifecycle", "no-public-web"]);
    expect(body.egress).toEqual({
      access: "listed",
      allowedHosts: ["*.npmjs.org", "registry.npmjs.org"],
      deniedHosts: [],
    });
    // The labelled sandbox is also reached by the frozen binding: a plain forbid is a deny.
    const old = await effective(older);
    expect(old.body.bindings).toHaveLength(2);
    expect(action(old.body, "sandbox:start")).toMatchObject({ decision: "deny", ruleIds: ["frozen"] });
  });

  it("lets a sandbox token read its own sandbox's effective policy and nothing else", async () => {
    const minted = await h.call<{ token: string }>("POST", `/v1/projects/${h.projectId}/sandbox-tokens`, {
      sandboxId: newer,
      name: "agent",
      expiresIn: 3600,
    });
    expect(minted.status).toBe(201);
    const as = (sandboxId: string) =>
      fetch(`${h.url}/v1/projects/${h.projectId}/sandboxes/${sandboxId}/effective-policy`, {
        headers: { authorization: `Bearer ${minted.body.token}` },
      });
    const own = await as(newer);
    expect(own.status).toBe(200);
    expect(((await own.json()) as EffectivePolicy).sandboxId).toBe(newer);
    expect((await as(older)).status).toBe(404);
    expect((await effective("sbx_01j0000000000000000000000")).status).toBe(404);
  });

  it("drift lists the older sandbox the current bindings would not admit, pinned bindings, and keeps since", async () => {
    const path = `/v1/orgs/${h.orgId}/policy-bindings/drift`;
    const first = (await h.call<DriftReport>("GET", `${path}?refresh=true`)).body;
    const findings = first.items.filter((e) => e.reason === "resource").map((e) => [e.target.id, e.action, e.ruleId]);
    expect(findings).toEqual(
      expect.arrayContaining([
        [older, "sandbox:create", "no-public-web"],
        [older, "sandbox:expose-port", "no-public-ports"],
      ]),
    );
    expect(findings.some(([id]) => id === newer)).toBe(false);
    expect(first.totals).toMatchObject({ resources: 1, pinnedBindings: 0 });
    expect(first.items.find((e) => e.target.id === older)?.target.projectId).toBe(h.projectId);

    const tools = await policy("pinned", `@id("p") permit(principal, action == Action::"tool:call", resource);`);
    const pinned = await bind({ policyId: tools, version: 1 });
    const updated = await h.call("PATCH", `/v1/projects/${h.projectId}/policies/${tools}`, {
      cedar: `@id("p") permit(principal, action == Action::"tool:call", resource) when { context.tool == "x" };`,
    });
    expect(updated.status).toBe(200);
    // Without refresh: the stored report.
    expect((await h.call<DriftReport>("GET", path)).body.auditedAt).toBe(first.auditedAt);
    const second = (await h.call<DriftReport>("GET", `${path}?refresh=true`)).body;
    expect(second.items).toContainEqual(
      expect.objectContaining({ reason: "pinned-version", bindingId: pinned, version: 1, latestVersion: 2 }),
    );
    const since = (r: DriftReport) =>
      r.items.find((e) => e.target.id === older && e.action === "sandbox:create")?.since;
    expect(since(second)).toBe(since(first));

    // The older sandbox made private again: the current bindings admit it, and it leaves the report.
    const privatized = await h.call("PATCH", `/v1/projects/${h.projectId}/sandboxes/${older}`, {
      ports: [{ port: 8080, visibility: "private" }],
    });
    expect(privatized.status).toBe(200);
    const third = (await h.call<DriftReport>("GET", `${path}?refresh=true`)).body;
    expect(third.items.some((e) => e.reason === "resource" && e.target.id === older)).toBe(false);
  });

  it("an org binding that selects projects by label reaches the sandboxes of the labelled project only", async () => {
    const orgPolicy = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/policies`, {
      name: "prod-no-start",
      cedar: `@id("prod-frozen") forbid(principal, action == Action::"sandbox:start", resource);`,
    });
    expect(orgPolicy.status).toBe(201);
    const binding = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/policy-bindings`, {
      policyId: orgPolicy.body.id,
      target: { projectSelector: "env=prod" },
    });
    expect(binding.status).toBe(201);
    const reaches = async () => (await effective(newer)).body.bindings.some((b) => b.bindingId === binding.body.id);
    expect(await reaches()).toBe(false);
    // Tenancy publishes the project's new labels; governance follows within seconds.
    const labelled = await h.call<{ labels: Record<string, string> }>("PATCH", `/v1/projects/${h.projectId}`, {
      labels: { env: "prod" },
    });
    expect(labelled.status).toBe(200);
    expect(labelled.body.labels).toEqual({ env: "prod" });
    expect(await eventually(reaches, (r) => r)).toBe(true);
    const { body } = await effective(newer);
    expect(action(body, "sandbox:start")).toMatchObject({ decision: "deny", ruleIds: ["prod-frozen"] });
    await h.call("PATCH", `/v1/projects/${h.projectId}`, { labels: {} });
    expect(await eventually(reaches, (r) => !r)).toBe(false);
  });
});
