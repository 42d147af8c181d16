import {
  type DriftReport,
  type EffectivePolicy,
  type Principal,
  QuerySandboxesRequest,
  SANDBOX_INTERNAL,
  type SandboxSummary,
} from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { ServiceClient } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acquireLease } from "../src/services/drift.ts";
import { type Harness, json, secondOrg, sharedKeys, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

const AGENTS = `@id("only-git-npm")
permit(principal, action == Action::"sandbox:exec", resource) when { ["git", "npm"].contains(context.program) };
@id("npm-registry")
permit(principal, action == Action::"sandbox:egress", resource)
when { context.host == "registry.npmjs.org" || context.host like "*.npmjs.org" };
@id("allow-lifecycle")
permit(principal, action in [Action::"sandbox:create", Action::"sandbox:update", Action::"sandbox:start", Action::"sandbox:expose-port"], resource);
@id("no-python")
forbid(principal, action == Action::"sandbox:create", resource) when { context.image like "python:*" };
@id("no-public-ports")
forbid(principal, action == Action::"sandbox:expose-port", resource) when { context.visibility == "public" };`;

describe.skipIf(!target.available)(`effective policy and drift on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;
  const sandboxes: SandboxSummary[] = [];
  const queries: unknown[] = [];

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    // sandbox-svc's internal query API (POST /internal/sandboxes/query), answered from a list:
    // governance only reads it, and the shape is the contract's.
    const standIn = async (request: Request) => {
      expect(new URL(request.url).pathname).toBe(SANDBOX_INTERNAL.querySandboxes);
      const query = QuerySandboxesRequest.parse(await request.json());
      queries.push(query);
      const items = sandboxes.filter(
        (s) =>
          s.orgId === query.orgId &&
          (!query.projectId || s.projectId === query.projectId) &&
          (!query.sandboxId || s.id === query.sandboxId),
      );
      return Response.json({ items });
    };
    h = await startHarness(opened.database, {
      sandboxes: new ServiceClient("sandbox", standIn, await sharedKeys()),
    });
    projectId = await h.project("agents");
    sandboxes.push(
      {
        id: "sbx_old",
        orgId: h.orgId,
        projectId,
        name: "old",
        image: "python:3.12",
        labels: { team: "ml" },
        ports: [{ port: 8080, visibility: "public" }],
        status: "running",
        createdAt: "2026-01-01T00:00:00.000Z",
      },
      {
        id: "sbx_new",
        orgId: h.orgId,
        projectId,
        name: "new",
        image: "node:22",
        labels: {},
        ports: [],
        status: "running",
        createdAt: "2026-02-01T00:00:00.000Z",
      },
    );
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const effective = async (sandboxId: string, as: Principal = h.owner) => {
    const res = await h.call("GET", `/v1/projects/${projectId}/sandboxes/${sandboxId}/effective-policy`, { as });
    return { status: res.status, body: res.status === 200 ? await json<EffectivePolicy>(res) : undefined };
  };
  const action = (p: EffectivePolicy | undefined, name: string) => p?.actions.find((a) => a.action === name);

  it("reports every sandbox action ungoverned before anything is bound", async () => {
    const { body } = await effective("sbx_new");
    expect(body?.bindings).toEqual([]);
    expect(body?.actions.every((a) => a.decision === "allow" && !a.governed)).toBe(true);
    expect(body?.egress).toEqual({ access: "none", allowedHosts: [], deniedHosts: [] });
  });

  it("shows the bindings, per-action summaries with rule ids, and the allowed egress hosts", async () => {
    const policy = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policies`, {
        as: h.owner,
        body: { name: "agents", cedar: AGENTS },
      }),
    );
    const binding = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, { as: h.owner, body: { policyId: policy.id } }),
    );
    const frozen = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policies`, {
        as: h.owner,
        body: {
          name: "frozen",
          cedar: `@id("frozen") forbid(principal, action == Action::"sandbox:start", resource);`,
        },
      }),
    );
    await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: frozen.id, target: { kind: "sandbox", selector: "team=ml" } },
    });
    const { body } = await effective("sbx_new");
    expect(body?.bindings).toEqual([
      expect.objectContaining({
        bindingId: binding.id,
        policyId: policy.id,
        version: 1,
        mode: "enforce",
        pinned: false,
      }),
    ]);
    expect(action(body, "sandbox:exec")).toMatchObject({
      decision: "conditional",
      governed: true,
      ruleIds: ["only-git-npm"],
    });
    expect(action(body, "sandbox:start")).toMatchObject({ decision: "allow", ruleIds: ["allow-lifecycle"] });
    expect(action(body, "sandbox:create")?.decision).toBe("conditional");
    expect(action(body, "sandbox:create")?.ruleIds.sort()).toEqual(["allow-lifecycle", "no-python"]);
    expect(body?.egress).toEqual({
      access: "listed",
      allowedHosts: ["*.npmjs.org", "registry.npmjs.org"],
      deniedHosts: [],
    });
    // The ml sandbox is also reached by the frozen binding: start is denied outright.
    const old = await effective("sbx_old");
    expect(old.body?.bindings).toHaveLength(2);
    expect(action(old.body, "sandbox:start")).toMatchObject({ decision: "deny", ruleIds: ["frozen"] });
  });

  it("lets a sandbox token read its own sandbox's effective policy and nothing else", async () => {
    const token: Principal = { type: "sandbox", id: "sbt_1", orgId: h.orgId, projectId, sandboxId: "sbx_new" };
    expect((await effective("sbx_new", token)).status).toBe(200);
    expect((await effective("sbx_old", token)).status).toBe(404);
    const other = await secondOrg(h);
    expect((await effective("sbx_new", other.owner)).status).toBe(404);
    expect((await effective("sbx_missing")).status).toBe(404);
  });

  it("drift lists the older sandbox the current bindings would not admit and pinned bindings, keeping since", async () => {
    const path = `/v1/orgs/${h.orgId}/policy-bindings/drift`;
    const first = await json<DriftReport>(await h.call("GET", `${path}?refresh=true`, { as: h.owner }));
    const findings = first.items.filter((e) => e.reason === "resource").map((e) => [e.target.id, e.action, e.ruleId]);
    expect(findings).toEqual(
      expect.arrayContaining([
        ["sbx_old", "sandbox:create", "no-python"],
        ["sbx_old", "sandbox:expose-port", "no-public-ports"],
      ]),
    );
    expect(findings.some(([id]) => id === "sbx_new")).toBe(false);
    expect(first.totals).toMatchObject({ resources: 1, pinnedBindings: 0 });
    expect(first.auditedAt).toBeDefined();

    const policy = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policies`, {
        as: h.owner,
        body: { name: "pinned", cedar: `@id("p") permit(principal, action == Action::"tool:call", resource);` },
      }),
    );
    const pinned = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, {
        as: h.owner,
        body: { policyId: policy.id, version: 1 },
      }),
    );
    await h.call("PATCH", `/v1/projects/${projectId}/policies/${policy.id}`, {
      as: h.owner,
      body: {
        cedar: `@id("p") permit(principal, action == Action::"tool:call", resource) when { context.tool == "x" };`,
      },
    });
    // Without refresh: the stored report.
    const stored = await json<DriftReport>(await h.call("GET", path, { as: h.owner }));
    expect(stored.auditedAt).toBe(first.auditedAt);
    const second = await json<DriftReport>(await h.call("GET", `${path}?refresh=true`, { as: h.owner }));
    expect(second.items).toContainEqual(
      expect.objectContaining({ reason: "pinned-version", bindingId: pinned.id, version: 1, latestVersion: 2 }),
    );
    const again = second.items.find((e) => e.target.id === "sbx_old" && e.ruleId === "no-python");
    expect(again?.since).toBe(first.items.find((e) => e.ruleId === "no-python")?.since);
  });

  it("drift is for org admins; the background audit runs on one replica at a time", async () => {
    const member = await h.member("member@a.test", "member");
    expect((await h.call("GET", `/v1/orgs/${h.orgId}/policy-bindings/drift`, { as: member })).status).toBe(403);
    const db = h.governance.context.db;
    expect(await acquireLease(db, "drift-test", "replica-a", 5000)).toBe(true);
    expect(await acquireLease(db, "drift-test", "replica-b", 5000)).toBe(false);
    expect(await acquireLease(db, "drift-test", "replica-a", 5000)).toBe(true);
  });
});
