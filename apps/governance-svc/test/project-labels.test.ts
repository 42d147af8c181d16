import { type DecisionResponse, internalDecideRoute, type Project } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

const NO_CURL = `@id("no-curl")
permit(principal, action == Action::"sandbox:exec", resource);
forbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "curl" };`;

// Tenancy publishes project labels with each change; governance keeps them and narrows org
// bindings with a projectSelector to the projects they match.
describe.skipIf(!target.available)(`org bindings that select projects by label on postgres${target.reason}`, () => {
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

  const project = async (name: string, labels?: Record<string, string>) => {
    const res = await h.call("POST", `/v1/orgs/${h.orgId}/projects`, {
      as: h.owner,
      body: { name, ...(labels ? { labels } : {}) },
      service: "tenancy",
    });
    expect(res.status).toBe(201);
    return json<Project>(res);
  };
  const exec = async (projectId: string, program: string) => {
    const res = await h.internal(internalDecideRoute.path, {
      principal: { type: "sandbox", id: "sbt_x", orgId: h.orgId, projectId, sandboxId: "sbx_x" },
      action: "sandbox:exec",
      resource: { type: "Sandbox", id: "sbx_x", orgId: h.orgId, projectId, kind: "sandbox" },
      context: { argv: [program] },
    });
    expect(res.status).toBe(200);
    return json<DecisionResponse>(res);
  };

  it("projects carry labels through create, get, update and list", async () => {
    const created = await project("labelled", { env: "prod", team: "web" });
    expect(created.labels).toEqual({ env: "prod", team: "web" });
    const plain = await project("plain");
    expect(plain.labels).toEqual({});
    const got = await json<Project>(
      await h.call("GET", `/v1/projects/${created.id}`, { as: h.owner, service: "tenancy" }),
    );
    expect(got.labels).toEqual({ env: "prod", team: "web" });
    const updated = await h.call("PATCH", `/v1/projects/${plain.id}`, {
      as: h.owner,
      body: { labels: { env: "dev" } },
      service: "tenancy",
    });
    expect(updated.status).toBe(200);
    expect((await json<Project>(updated)).labels).toEqual({ env: "dev" });
    const bad = await h.call("PATCH", `/v1/projects/${plain.id}`, {
      as: h.owner,
      body: { labels: { "bad key!": "x" } },
      service: "tenancy",
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("/body/labels");
  });

  it("an org binding with a projectSelector governs the matching projects only, and follows label changes", async () => {
    const prod = await project("shop", { env: "prod" });
    const dev = await project("sandbox-play", { env: "dev" });
    const policy = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/policies`, { as: h.owner, body: { name: "no-curl", cedar: NO_CURL } }),
    );
    // Selectors are checked: a project binding cannot select projects, and a broken selector is a 400.
    const fromProject = await h.call("POST", `/v1/projects/${prod.id}/policy-bindings`, {
      as: h.owner,
      body: { policyId: policy.id, target: { projectSelector: "env=prod" } },
    });
    expect(fromProject.status).toBe(400);
    const broken = await h.call("POST", `/v1/orgs/${h.orgId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: policy.id, target: { projectSelector: "env in (prod" } },
    });
    expect(broken.status).toBe(400);
    expect(JSON.stringify(await broken.json())).toContain("/body/target/projectSelector");

    const bound = await h.call("POST", `/v1/orgs/${h.orgId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: policy.id, target: { projectSelector: "env=prod" } },
    });
    expect(bound.status).toBe(201);
    await h.settle();
    await vi.waitFor(
      async () => {
        expect((await exec(prod.id, "curl")).decision).toBe("deny");
      },
      { timeout: 5000, interval: 100 },
    );
    expect((await exec(prod.id, "git")).decision).toBe("allow");
    expect((await exec(dev.id, "curl")).decision).toBe("allow");

    // The dev project is relabelled prod: the binding reaches it within seconds; and back.
    await h.call("PATCH", `/v1/projects/${dev.id}`, {
      as: h.owner,
      body: { labels: { env: "prod" } },
      service: "tenancy",
    });
    await vi.waitFor(
      async () => {
        await h.settle();
        expect((await exec(dev.id, "curl")).decision).toBe("deny");
      },
      { timeout: 5000, interval: 100 },
    );
    const denied = await exec(dev.id, "curl");
    expect(denied.reasons[0]).toMatchObject({ ruleId: expect.any(String), policyId: policy.id });
    await h.call("PATCH", `/v1/projects/${dev.id}`, { as: h.owner, body: { labels: {} }, service: "tenancy" });
    await vi.waitFor(
      async () => {
        await h.settle();
        expect((await exec(dev.id, "curl")).decision).toBe("allow");
      },
      { timeout: 5000, interval: 100 },
    );
    expect((await exec(prod.id, "curl")).decision).toBe("deny");
  });

  it("a project admin who is not an org admin cannot relabel the project out of an org binding", async () => {
    const policy = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/policies`, {
        as: h.owner,
        body: { name: "no-curl-in-prod", cedar: NO_CURL },
      }),
    );
    const bound = await h.call("POST", `/v1/orgs/${h.orgId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: policy.id, target: { projectSelector: "tier=prod" } },
    });
    expect(bound.status).toBe(201);
    // A member who creates a project is its admin.
    const member = await h.member("relabel@a.test", "member");
    const created = await h.call("POST", `/v1/orgs/${h.orgId}/projects`, {
      as: member,
      body: { name: "members-shop", labels: { tier: "prod" } },
      service: "tenancy",
    });
    expect(created.status).toBe(201);
    const shop = await json<Project>(created);
    await vi.waitFor(
      async () => {
        await h.settle();
        expect((await exec(shop.id, "curl")).decision).toBe("deny");
      },
      { timeout: 5000, interval: 100 },
    );
    const relabelled = await h.call("PATCH", `/v1/projects/${shop.id}`, {
      as: member,
      body: { labels: { tier: "dev" } },
      service: "tenancy",
    });
    expect(relabelled.status).toBe(403);
    expect(relabelled.headers.get("content-type")).toContain("application/problem+json");
    // Other changes stay the project admin's.
    const renamed = await h.call("PATCH", `/v1/projects/${shop.id}`, {
      as: member,
      body: { name: "members-shop-2", labels: { tier: "prod" } },
      service: "tenancy",
    });
    expect(renamed.status).toBe(200);
    await h.settle();
    expect((await exec(shop.id, "curl")).decision).toBe("deny");
  });
});
