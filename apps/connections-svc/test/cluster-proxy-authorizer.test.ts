import type { AuthorizeRequest, AuthorizeResponse, Principal } from "@agentplane/contracts";
import type { Authorizer } from "@agentplane/service-kit";
import { describe, expect, it } from "vitest";
import { CachedAuthorizer, PROXY_AUTHZ_TTL_MS } from "../src/services/proxy-authorizer.ts";

/** Tenancy's answers as a table the test edits (a role change), counting the questions asked. */
function tenancy() {
  const roles = new Map<string, "developer" | "viewer">([["usr_a", "developer"]]);
  const state = { asked: 0, down: false };
  const authorizer: Authorizer = {
    async check(request: AuthorizeRequest): Promise<AuthorizeResponse> {
      state.asked++;
      if (state.down) throw new Error("tenancy unavailable");
      const role = roles.get(request.principal.id);
      if (!role || request.projectId !== "prj_1") return { decision: "not_found" };
      const allowed = request.permission !== "connectors:call" || role === "developer";
      return { decision: allowed ? "allowed" : "forbidden", orgId: "org_1", projectId: "prj_1", projectRole: role };
    },
  };
  return { authorizer, roles, state };
}

const user = (id: string): Principal => ({ type: "user", id, displayName: id });
const ask = (a: Authorizer, id = "usr_a", projectId = "prj_1", permission = "connectors:call") =>
  a.check({ principal: user(id), permission, projectId });

describe("the proxies' authorizer cache", () => {
  it("reuses an answer per principal, permission and project for 3 s, then asks again", async () => {
    const clock = { t: 1000, now: () => clock.t };
    const t = tenancy();
    const cached = new CachedAuthorizer(t.authorizer, { clock });
    expect((await ask(cached)).decision).toBe("allowed");
    expect((await ask(cached)).decision).toBe("allowed");
    expect(t.state.asked).toBe(1);
    // Another principal, project or permission is its own question.
    expect((await ask(cached, "usr_b")).decision).toBe("not_found");
    expect((await ask(cached, "usr_a", "prj_2")).decision).toBe("not_found");
    expect((await ask(cached, "usr_a", "prj_1", "clusters:read")).decision).toBe("allowed");
    expect(t.state.asked).toBe(4);
    // A demotion is seen once the answer is older than the TTL.
    t.roles.set("usr_a", "viewer");
    clock.t += PROXY_AUTHZ_TTL_MS - 1;
    expect((await ask(cached)).decision).toBe("allowed");
    clock.t += 2;
    expect((await ask(cached)).decision).toBe("forbidden");
  });

  it("keeps no failure: the next question asks tenancy again", async () => {
    const t = tenancy();
    const cached = new CachedAuthorizer(t.authorizer, { clock: { now: () => 0 } });
    t.state.down = true;
    await expect(ask(cached)).rejects.toThrow(/unavailable/);
    t.state.down = false;
    expect((await ask(cached)).decision).toBe("allowed");
    expect(t.state.asked).toBe(2);
  });
});
