import type { AuthorizeResponse, Principal } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";
import { type AuthorizationQuestion, type Authorizer, authorize, withSandboxTokens } from "../src/index.ts";

const alice: Principal = { type: "user", id: "usr_alice" };
const agent: Principal = { type: "sandbox", id: "sbt_1", orgId: "org_a", projectId: "prj_a", sandboxId: "sbx_1" };

/** Tenancy's answers from a fixed table: prj_a is org_a's (developer), prj_b org_b's (viewer), org_a admin. */
function table() {
  const asked: AuthorizationQuestion[] = [];
  const authorizer: Authorizer = {
    async check(question): Promise<AuthorizeResponse> {
      asked.push(question);
      if (question.orgId === "org_a") return { decision: "allowed", orgId: "org_a", orgRole: "admin" };
      if (question.projectId === "prj_a") {
        return { decision: "allowed", orgId: "org_a", projectId: "prj_a", projectRole: "developer", teamIds: ["t1"] };
      }
      if (question.projectId === "prj_b") return { decision: "forbidden", orgId: "org_b", projectId: "prj_b" };
      return { decision: "not_found" };
    },
  };
  return { authorizer, asked };
}

describe("authorize, the one authorization call", () => {
  it("returns the caller: who, the request, the organization and project decided, the roles", async () => {
    const { authorizer } = table();
    const caller = await authorize({ principal: alice, requestId: "req-1" }, authorizer, "sandboxes:write", {
      projectId: "prj_a",
    });
    expect(caller).toEqual({
      principal: alice,
      requestId: "req-1",
      orgId: "org_a",
      projectId: "prj_a",
      projectRole: "developer",
      teamIds: ["t1"],
    });
    const org = await authorize({ principal: alice }, authorizer, "members:manage", { orgId: "org_a" });
    expect(org).toEqual({ principal: alice, orgId: "org_a", orgRole: "admin" });
  });

  it("answers 404 for what the caller cannot see (naming the resource when told), 403 for a role too low", async () => {
    const { authorizer } = table();
    const who = { principal: alice };
    await expect(authorize(who, authorizer, "project:read", { projectId: "prj_x" })).rejects.toMatchObject({
      status: 404,
      detail: "Project prj_x was not found",
    });
    await expect(
      authorize(who, authorizer, "connections:read", { projectId: "prj_x", resource: "Cluster cl_1" }),
    ).rejects.toMatchObject({ status: 404, detail: "Cluster cl_1 was not found" });
    await expect(authorize(who, authorizer, "sandboxes:write", { projectId: "prj_b" })).rejects.toMatchObject({
      status: 403,
    });
  });

  it("asks the inner authorizer about everyone but sandbox tokens", async () => {
    const { authorizer, asked } = table();
    await authorize({ principal: alice }, withSandboxTokens(authorizer, ["sandboxes:read"]), "sandboxes:read", {
      projectId: "prj_a",
      sandboxId: "sbx_1",
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ principal: alice, projectId: "prj_a", sandboxId: "sbx_1" });
  });
});

describe("withSandboxTokens", () => {
  it("lets a sandbox token use the permissions given on its own sandbox only, without asking tenancy", async () => {
    const { authorizer, asked } = table();
    const sandboxes = withSandboxTokens(authorizer, ["sandboxes:read", "sandboxes:exec"]);
    const who = { principal: agent };
    const own = { projectId: "prj_a", sandboxId: "sbx_1" };
    expect(await authorize(who, sandboxes, "sandboxes:exec", own)).toMatchObject({
      orgId: "org_a",
      projectId: "prj_a",
    });
    // Its project, but not naming its sandbox, or a permission it was not given: 403.
    await expect(authorize(who, sandboxes, "sandboxes:read", { projectId: "prj_a" })).rejects.toMatchObject({
      status: 403,
    });
    await expect(authorize(who, sandboxes, "sandboxes:write", own)).rejects.toMatchObject({ status: 403 });
    // Another sandbox, another project, an organization: invisible.
    for (const scope of [{ projectId: "prj_a", sandboxId: "sbx_2" }, { projectId: "prj_b" }, { orgId: "org_a" }]) {
      await expect(authorize(who, sandboxes, "sandboxes:read", scope)).rejects.toMatchObject({ status: 404 });
    }
    expect(asked).toHaveLength(0);
  });
});
