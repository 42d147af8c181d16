import type { Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, secondOrg, startHarness } from "./fixtures/harness.ts";

const ALLOW_GIT = `@id("allow-git-npm")
permit(principal, action == Action::"sandbox:exec", resource)
when { ["git", "npm"].contains(context.program) };`;

// Postgres only: opening PGlite costs a minute on a loaded machine; decisions.test.ts covers PGlite.
const [postgresTarget] = await databaseTargets();
const target = postgresTarget!;

describe.skipIf(!target.available)(`policies and bindings on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let viewer: Principal;
  let projectId: string;
  let other: { owner: Principal; orgId: string };

  beforeAll(async () => {
    if (!target.available) return;
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    viewer = await h.member("viewer@a.test", "viewer");
    projectId = await h.project("p1");
    other = await secondOrg(h);
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const create = (body: unknown, as?: Principal, path?: string) =>
    h.call("POST", path ?? `/v1/orgs/${h.orgId}/policies`, { as: as ?? h.owner, body });

  it.skipIf(!target.available)("creates a policy with its rule ids, generating one where @id is missing", async () => {
    const res = await create({
      name: "exec",
      labels: { team: "platform" },
      cedar: `${ALLOW_GIT}\nforbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "rm" };`,
    });
    expect(res.status).toBe(201);
    const policy = await json<{ id: string; version: number; rules: { id: string; effect: string }[]; scope: string }>(
      res,
    );
    expect(policy.id).toMatch(/^pol_/);
    expect(policy.version).toBe(1);
    expect(policy.scope).toBe("org");
    expect(policy.rules[0]).toEqual({ id: "allow-git-npm", effect: "permit" });
    expect(policy.rules[1]!.id).toMatch(/^rule-[0-9a-f]{10}$/);
    // The generated id is stable: the same statement in another policy gets the same id.
    const again = await json<{ rules: { id: string }[] }>(
      await create({
        name: "exec-copy",
        cedar: `forbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "rm" };`,
      }),
    );
    expect(again.rules[0]!.id).toBe(policy.rules[1]!.id);
  });

  it.skipIf(!target.available)("answers 400 with line and column for syntax and schema errors", async () => {
    const syntax = await create({ name: "bad", cedar: `permit(principal, action,\n  resource\n when {` });
    expect(syntax.status).toBe(400);
    const body = await json<{ errors: { pointer: string; line: number; column: number; message: string }[] }>(syntax);
    expect(body.errors[0]!.pointer).toBe("/body/cedar");
    expect(body.errors[0]!.line).toBe(3);
    expect(body.errors[0]!.column).toBeGreaterThan(0);

    const action = await create({
      name: "bad2",
      cedar: `permit(principal, action == Action::"sandbox:fly", resource);`,
    });
    expect(action.status).toBe(400);
    expect(JSON.stringify(await json(action))).toContain("sandbox:fly");

    const entity = await create({ name: "bad3", cedar: `permit(principal, action, resource is Spaceship);` });
    expect(entity.status).toBe(400);

    const attribute = await create({
      name: "bad4",
      cedar: `permit(principal, action == Action::"sandbox:exec", resource) when { context.progrm == "git" };`,
    });
    expect(attribute.status).toBe(400);
    const list = await json<{ items: { name: string }[] }>(
      await h.call("GET", `/v1/orgs/${h.orgId}/policies`, { as: h.owner }),
    );
    // Nothing partly written by the failed requests.
    expect(list.items.map((p) => p.name).filter((n) => n.startsWith("bad"))).toEqual([]);
  });

  it.skipIf(!target.available)("keeps every version: an update of the body is version n+1", async () => {
    const created = await json<{ id: string }>(await create({ name: "versions", cedar: ALLOW_GIT }));
    const path = `/v1/orgs/${h.orgId}/policies/${created.id}`;
    const v2 = await h.call("PATCH", path, {
      as: h.owner,
      body: { cedar: ALLOW_GIT.replace('"npm"', '"make"'), reason: "make instead of npm" },
    });
    expect(v2.status).toBe(200);
    expect((await json<{ version: number }>(v2)).version).toBe(2);
    const renamed = await json<{ version: number; name: string }>(
      await h.call("PATCH", path, { as: h.owner, body: { name: "versions-renamed" } }),
    );
    expect(renamed).toMatchObject({ version: 2, name: "versions-renamed" });
    const versions = await json<{ items: { version: number; reason?: string; author: string }[] }>(
      await h.call("GET", `${path}/versions`, { as: viewer }),
    );
    expect(versions.items.map((v) => v.version)).toEqual([2, 1]);
    expect(versions.items[0]).toMatchObject({ reason: "make instead of npm", author: h.owner.id });
    const v1 = await json<{ cedar: string }>(await h.call("GET", `${path}/versions/1`, { as: viewer }));
    expect(v1.cedar).toContain('"npm"');
    expect((await h.call("GET", `${path}/versions/3`, { as: viewer })).status).toBe(404);
  });

  it.skipIf(!target.available)("answers 409 for a duplicate name within a scope, not across scopes", async () => {
    expect((await create({ name: "dup", cedar: ALLOW_GIT })).status).toBe(201);
    expect((await create({ name: "dup", cedar: ALLOW_GIT })).status).toBe(409);
    const inProject = await create({ name: "dup", cedar: ALLOW_GIT }, h.owner, `/v1/projects/${projectId}/policies`);
    expect(inProject.status).toBe(201);
  });

  it.skipIf(!target.available)("refuses to bind a version a policy does not have, naming the policy", async () => {
    const policy = await json<{ id: string }>(await create({ name: "versioned", cedar: ALLOW_GIT }));
    const bind = await h.call("POST", `/v1/orgs/${h.orgId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: policy.id, version: 99 },
    });
    expect(bind.status).toBe(400);
    const problem = await json<{ detail: string; errors: { pointer: string; message: string }[] }>(bind);
    expect(problem.detail).toBe(`Policy "versioned" (${policy.id}) has no version 99`);
    expect(problem.errors).toEqual([{ pointer: "/body/version", message: "at most 1" }]);
  });

  it.skipIf(!target.available)("refuses to delete a bound policy, naming the binding", async () => {
    const policy = await json<{ id: string }>(await create({ name: "bound", cedar: ALLOW_GIT }));
    const binding = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/policy-bindings`, { as: h.owner, body: { policyId: policy.id } }),
    );
    const del = await h.call("DELETE", `/v1/orgs/${h.orgId}/policies/${policy.id}`, { as: h.owner });
    expect(del.status).toBe(409);
    expect((await json<{ detail: string }>(del)).detail).toContain(binding.id);
    expect((await h.call("DELETE", `/v1/orgs/${h.orgId}/policy-bindings/${binding.id}`, { as: h.owner })).status).toBe(
      204,
    );
    expect((await h.call("DELETE", `/v1/orgs/${h.orgId}/policies/${policy.id}`, { as: h.owner })).status).toBe(204);
    expect((await h.call("GET", `/v1/orgs/${h.orgId}/policies/${policy.id}`, { as: h.owner })).status).toBe(404);
  });

  it.skipIf(!target.available)(
    "answers 404 for another organization's ids and 403 to a viewer who writes",
    async () => {
      const policy = await json<{ id: string }>(await create({ name: "private", cedar: ALLOW_GIT }));
      expect((await h.call("GET", `/v1/orgs/${h.orgId}/policies/${policy.id}`, { as: other.owner })).status).toBe(404);
      expect((await h.call("GET", `/v1/orgs/${other.orgId}/policies/${policy.id}`, { as: other.owner })).status).toBe(
        404,
      );
      expect((await create({ name: "viewer", cedar: ALLOW_GIT }, viewer)).status).toBe(403);
      expect((await h.call("GET", `/v1/orgs/${h.orgId}/policies/${policy.id}`, { as: viewer })).status).toBe(200);
    },
  );

  it.skipIf(!target.available)("binds in both scopes and modes, with the issue's bad-input answers", async () => {
    const orgPolicy = await json<{ id: string }>(await create({ name: "org-bind", cedar: ALLOW_GIT }));
    const projectPolicy = await json<{ id: string }>(
      await create({ name: "project-bind", cedar: ALLOW_GIT }, h.owner, `/v1/projects/${projectId}/policies`),
    );
    const orgBindings = `/v1/orgs/${h.orgId}/policy-bindings`;
    const projectBindings = `/v1/projects/${projectId}/policy-bindings`;
    const dryrun = await h.call("POST", orgBindings, {
      as: h.owner,
      body: { policyId: orgPolicy.id, mode: "dryrun", version: 1, target: { projectIds: [projectId] } },
    });
    expect(dryrun.status).toBe(201);
    expect(await json(dryrun)).toMatchObject({ mode: "dryrun", version: 1, scope: "org" });
    // A project admin may adopt an org policy; a project policy is never bound at org level.
    const adopted = await h.call("POST", projectBindings, { as: h.owner, body: { policyId: orgPolicy.id } });
    expect(await json(adopted)).toMatchObject({ mode: "enforce", version: "latest", scope: "project", projectId });
    expect((await h.call("POST", orgBindings, { as: h.owner, body: { policyId: projectPolicy.id } })).status).toBe(400);
    const selector = await h.call("POST", projectBindings, {
      as: h.owner,
      body: { policyId: projectPolicy.id, target: { kind: "sandbox", selector: "team in (ml" } },
    });
    expect(selector.status).toBe(400);
    expect((await json<{ errors: { pointer: string }[] }>(selector)).errors[0]!.pointer).toBe("/body/target/selector");
    const missing = await h.call("POST", projectBindings, {
      as: h.owner,
      body: { policyId: projectPolicy.id, version: 7 },
    });
    expect(missing.status).toBe(400);
    const foreign = await h.call("POST", `/v1/orgs/${other.orgId}/policy-bindings`, {
      as: other.owner,
      body: { policyId: orgPolicy.id },
    });
    expect(foreign.status).toBe(404);
    expect((await h.call("POST", orgBindings, { as: viewer, body: { policyId: orgPolicy.id } })).status).toBe(403);
    const listed = await json<{ items: { id: string }[] }>(await h.call("GET", projectBindings, { as: viewer }));
    expect(listed.items).toHaveLength(1);
  });
});
