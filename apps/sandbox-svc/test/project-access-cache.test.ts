import {
  type AuthorizeRequest,
  type AuthorizeResponse,
  PERMISSIONS,
  type Permission,
  type Principal,
  type ProjectRole,
  projectRoleAtLeast,
} from "@agentplane/contracts";
import type { Authorizer } from "@agentplane/service-kit";
import { describe, expect, it } from "vitest";
import { PROJECT_ACCESS_TTL_MS, ProjectAccessCache } from "../src/project-access-cache.ts";

/**
 * Tenancy's project decisions as a role table the test edits (a demotion), counting the
 * questions asked: a project permission is allowed when the role reaches its minimum role and a
 * scoped token names it.
 */
function tenancy() {
  const roles = new Map<string, ProjectRole>([["usr_a", "developer"]]);
  const state = { asked: 0, down: false };
  const authorizer: Authorizer = {
    async check(request: AuthorizeRequest): Promise<AuthorizeResponse> {
      state.asked++;
      if (state.down) throw new Error("tenancy unavailable");
      const userId = request.principal.type === "api_token" ? request.principal.userId : request.principal.id;
      const role = roles.get(userId ?? "");
      if (!role || request.projectId !== "prj_1") return { decision: "not_found" };
      const rule = PERMISSIONS[request.permission as Permission];
      const scopes = request.principal.type === "api_token" ? request.principal.scopes : undefined;
      const allowed =
        projectRoleAtLeast(role, rule.minRole as ProjectRole) && (!scopes || scopes.includes(request.permission));
      return { decision: allowed ? "allowed" : "forbidden", orgId: "org_1", projectId: "prj_1", projectRole: role };
    },
  };
  return { authorizer, roles, state };
}

const user = (id = "usr_a"): Principal => ({ type: "user", id, displayName: id });
const ask = (a: Authorizer, permission: string, principal = user(), projectId = "prj_1") =>
  a.check({ principal, permission, projectId });

describe("sandbox-svc's project access cache", () => {
  it("answers another project permission the cached role allows, for 3 s", async () => {
    const clock = { t: 1000, now: () => clock.t };
    const t = tenancy();
    const cached = new ProjectAccessCache(t.authorizer, { clock });
    expect(await ask(cached, "sandboxes:write")).toMatchObject({ decision: "allowed", projectRole: "developer" });
    // The exec after a create, and a read: the developer role allows both.
    expect(await ask(cached, "sandboxes:exec")).toMatchObject({ decision: "allowed", orgId: "org_1" });
    expect((await ask(cached, "sandboxes:read")).decision).toBe("allowed");
    expect(t.state.asked).toBe(1);
    // A permission above the role, another principal or project: tenancy decides.
    expect((await ask(cached, "project:update")).decision).toBe("forbidden");
    expect((await ask(cached, "sandboxes:exec", user("usr_b"))).decision).toBe("not_found");
    expect((await ask(cached, "sandboxes:exec", user(), "prj_2")).decision).toBe("not_found");
    expect(t.state.asked).toBe(4);
    // A demotion is seen once the answer is older than the TTL.
    t.roles.set("usr_a", "viewer");
    clock.t += PROJECT_ACCESS_TTL_MS - 1;
    expect((await ask(cached, "sandboxes:exec")).decision).toBe("allowed");
    clock.t += 2;
    expect((await ask(cached, "sandboxes:exec")).decision).toBe("forbidden");
  });

  it("keeps no deny and no failure: each asks tenancy again", async () => {
    const t = tenancy();
    const cached = new ProjectAccessCache(t.authorizer, { clock: { now: () => 0 } });
    t.roles.set("usr_a", "viewer");
    expect((await ask(cached, "sandboxes:exec")).decision).toBe("forbidden");
    t.roles.set("usr_a", "developer");
    expect((await ask(cached, "sandboxes:exec")).decision).toBe("allowed");
    t.state.down = true;
    await expect(ask(cached, "sandboxes:write", user("usr_c"))).rejects.toThrow(/unavailable/);
    t.state.down = false;
    t.roles.set("usr_c", "admin");
    expect((await ask(cached, "sandboxes:write", user("usr_c"))).decision).toBe("allowed");
    expect(t.state.asked).toBe(4);
  });

  it("lets a scoped token use only the permissions it names", async () => {
    const t = tenancy();
    const cached = new ProjectAccessCache(t.authorizer, { clock: { now: () => 0 } });
    const token: Principal = { type: "api_token", id: "tok_1", userId: "usr_a", scopes: ["sandboxes:write"] };
    expect((await ask(cached, "sandboxes:write", token)).decision).toBe("allowed");
    // The role would allow an exec; the token's scopes do not, and tenancy says so.
    expect((await ask(cached, "sandboxes:exec", token)).decision).toBe("forbidden");
    expect(t.state.asked).toBe(2);
  });
});
