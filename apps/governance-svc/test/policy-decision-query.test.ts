import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

const NO_RM = `@id("allow-exec")
permit(principal, action == Action::"sandbox:exec", resource);
@id("no-rm")
forbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "rm" };`;

interface Decision {
  decision: string;
  enforced: boolean;
  reasons: { ruleId: string; forbid?: boolean }[];
}

describe.skipIf(!target.available)(`"would this be allowed?" on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectId = await h.project("decisions");
    const policy = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policies`, {
        as: h.owner,
        body: { name: "no-rm", cedar: NO_RM },
      }),
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

  const ask = (context: Record<string, unknown>, body: Record<string, unknown> = {}) =>
    h.call("POST", `/v1/projects/${projectId}/policy-decisions`, {
      as: h.owner,
      body: { action: "sandbox:exec", resource: { type: "Sandbox", id: "sbx_x", kind: "sandbox" }, context, ...body },
    });

  it("answers the bound policies' decision for the caller, with the rule that decided", async () => {
    const allowed = await ask({ argv: ["ls"] });
    expect(allowed.status).toBe(200);
    expect(await json<Decision>(allowed)).toMatchObject({ decision: "allow", enforced: true });
    // The program is read from argv, as the exec enforcement point sends it.
    await expect.poll(async () => (await json<Decision>(await ask({ argv: ["rm", "x"] }))).decision).toBe("deny");
    const denied = await json<Decision>(await ask({ argv: ["rm", "-rf", "/"] }));
    expect(denied).toMatchObject({ decision: "deny", enforced: true });
    expect(denied.reasons).toContainEqual(expect.objectContaining({ ruleId: "no-rm", forbid: true }));
  });

  it("refuses unknown actions with the field named, and projects the caller cannot see", async () => {
    const bad = await ask({}, { action: "sandbox:fly" });
    expect(bad.status).toBe(400);
    expect((await json<{ errors: { pointer: string }[] }>(bad)).errors[0]?.pointer).toBe("/body/action");
    const elsewhere = await h.call("POST", "/v1/projects/prj_00000000000000000000000000/policy-decisions", {
      as: h.owner,
      body: { action: "sandbox:exec", resource: { type: "Sandbox", id: "x" } },
    });
    expect(elsewhere.status).toBe(404);
  });

  it("refuses a context that nests too deep with a 400 naming it", async () => {
    // Built as text: JSON.stringify itself gives up long before this depth.
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const resource = `{"type":"Sandbox","id":"sbx_x","kind":"sandbox"}`;
    const asked = await h.call("POST", `/v1/projects/${projectId}/policy-decisions`, {
      as: h.owner,
      body: `{"action":"sandbox:exec","resource":${resource},"context":{"argv":${deep}}}`,
    });
    expect(asked.status).toBe(400);
    expect(asked.headers.get("content-type")).toContain("application/problem+json");
    const problem = await json<{ errors: { pointer: string; message: string }[] }>(asked);
    expect(problem.errors).toEqual([
      { pointer: "/body/context", message: expect.stringContaining("deeper than 128 levels") },
    ]);
    const fine = await ask({ argv: ["ls"], extra: JSON.parse(`${"[".repeat(100)}${"]".repeat(100)}`) });
    expect(fine.status).toBe(200);
  });
});
