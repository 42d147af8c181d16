import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, secondOrg, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

interface Decision {
  decision: string;
  reasons: { ruleId: string }[];
  principal: { type: string; id: string; displayName?: string };
}

// A sandbox asked about (its identity comes from sandbox-svc) is covered in
// apps/platform/test/policy-decision-principal.test.ts.
describe.skipIf(!target.available)(`"would this be allowed?" for another principal on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;
  let viewer: Awaited<ReturnType<Harness["member"]>>;
  let developer: Awaited<ReturnType<Harness["member"]>>;
  let tokenId: string;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectId = await h.project("asking");
    viewer = await h.member("viewer@a.test", "viewer");
    developer = await h.member("dev@a.test", "member");
    const token = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, {
        as: developer,
        body: { name: "a script" },
        service: "tenancy",
      }),
    );
    tokenId = token.id;
    const cedar = `@id("allow-exec")
permit(principal, action == Action::"sandbox:exec", resource);
@id("viewer-no-exec")
forbid(principal == User::"${viewer.id}", action == Action::"sandbox:exec", resource);
@id("script-no-rm")
forbid(principal == ApiToken::"${tokenId}", action == Action::"sandbox:exec", resource) when { context.program == "rm" };`;
    const policy = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policies`, { as: h.owner, body: { name: "who", cedar } }),
    );
    const bound = await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: policy.id },
    });
    expect(bound.status).toBe(201);
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const ask = (as: typeof viewer, principal: unknown, argv = ["ls"]) =>
    h.call("POST", `/v1/projects/${projectId}/policy-decisions`, {
      as,
      body: {
        action: "sandbox:exec",
        resource: { type: "Sandbox", id: "sbx_x", kind: "sandbox" },
        context: { argv },
        ...(principal ? { principal } : {}),
      },
    });

  it("an admin asks for a member and for an API token, each decided as itself", async () => {
    await expect
      .poll(async () => (await json<Decision>(await ask(h.owner, { type: "user", id: viewer.id }))).decision)
      .toBe("deny");
    const forViewer = await json<Decision>(await ask(h.owner, { type: "user", id: viewer.id }));
    expect(forViewer.reasons.map((r) => r.ruleId)).toEqual(["viewer-no-exec"]);
    expect(forViewer.principal).toEqual({ type: "user", id: viewer.id, displayName: "viewer@a.test" });

    // The token is its own principal: the member's rule does not reach it, its own does.
    const tokenLs = await json<Decision>(await ask(h.owner, { type: "api_token", id: tokenId }));
    expect(tokenLs).toMatchObject({ decision: "allow", principal: { type: "api_token", id: tokenId } });
    const tokenRm = await json<Decision>(await ask(h.owner, { type: "api_token", id: tokenId }, ["rm", "x"]));
    expect(tokenRm.decision).toBe("deny");
    expect(tokenRm.reasons.map((r) => r.ruleId)).toEqual(["script-no-rm"]);

    // Without a principal the answer is the caller's own.
    const own = await json<Decision>(await ask(h.owner, undefined));
    expect(own).toMatchObject({ decision: "allow", principal: { type: h.owner.type, id: h.owner.id } });
  });

  it("only admins ask for others; anyone may name themselves", async () => {
    const refused = await ask(viewer, { type: "api_token", id: h.owner.id });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    const self = await ask(viewer, { type: "user", id: viewer.id });
    expect(self.status).toBe(200);
    expect((await json<Decision>(self)).decision).toBe("deny");
  });

  it("answers 404 for a principal that is not of the project, and 400 for an unknown kind", async () => {
    const b = await secondOrg(h);
    const outsider = await h.call("POST", `/v1/projects/${projectId}/policy-decisions`, {
      as: h.owner,
      body: {
        action: "sandbox:exec",
        resource: { type: "Sandbox", id: "x" },
        principal: { type: "user", id: b.owner.id },
      },
    });
    expect(outsider.status).toBe(404);
    expect(await json<{ detail: string }>(outsider)).toMatchObject({ detail: expect.stringContaining(b.owner.id) });
    expect((await ask(h.owner, { type: "user", id: "usr_00000000000000000000000000" })).status).toBe(404);

    const revoked = await h.call("DELETE", `/v1/api-tokens/${tokenId}`, { as: developer, service: "tenancy" });
    expect(revoked.status).toBe(204);
    expect((await ask(h.owner, { type: "api_token", id: tokenId })).status).toBe(404);

    const bad = await ask(h.owner, { type: "team", id: "team_x" });
    expect(bad.status).toBe(400);
    expect((await json<{ errors: { pointer: string }[] }>(bad)).errors[0]?.pointer).toBe("/body/principal/type");
  });
});
