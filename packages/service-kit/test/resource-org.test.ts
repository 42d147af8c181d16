import { INTERNAL_IDENTITY_HEADER, type Principal, RESOURCE_ORG_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import {
  type Authorizer,
  authorize,
  createServiceApp,
  generateInternalKeys,
  noteResourceOrg,
  signIdentity,
} from "../src/index.ts";

const alice: Principal = { type: "user", id: "usr_alice", displayName: "Alice" };

/** Decides from a fixed table: prj_a is org_a's (allowed), prj_b org_b's (forbidden), others unknown. */
const authorizer: Authorizer = {
  async check({ projectId }) {
    if (projectId === "prj_a") return { decision: "allowed", orgId: "org_a", projectId };
    if (projectId === "prj_b") return { decision: "forbidden", orgId: "org_b", projectId };
    return { decision: "not_found" };
  },
};

async function setup() {
  const keys = await generateInternalKeys();
  const app = createServiceApp({ name: "connections", keys });
  app.post("/things/:project", async (c) => {
    await authorize(c, authorizer, "sandboxes:write", { projectId: c.req.param("project") });
    return c.body(null, 204);
  });
  app.get("/noted/:org", (c) => {
    noteResourceOrg(c.req.param("org"));
    noteResourceOrg("org_later");
    return c.json({ ok: true });
  });
  app.get("/upstream", () => new Response("proxied", { headers: { [RESOURCE_ORG_HEADER]: "org_forged" } }));
  app.get("/fails", () => {
    noteResourceOrg("org_c");
    throw new ProblemError("conflict", { detail: "no" });
  });
  const headers = { [INTERNAL_IDENTITY_HEADER]: await signIdentity(keys, alice, { audience: "connections" }) };
  return { app, headers };
}

describe("the organization of the resource a request acted on", () => {
  it("is named by the answer when authorization resolved it, allowed or forbidden", async () => {
    const { app, headers } = await setup();
    const allowed = await app.request("/things/prj_a", { method: "POST", headers });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get(RESOURCE_ORG_HEADER)).toBe("org_a");
    const forbidden = await app.request("/things/prj_b", { method: "POST", headers });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get(RESOURCE_ORG_HEADER)).toBe("org_b");
    const unknown = await app.request("/things/prj_x", { method: "POST", headers });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get(RESOURCE_ORG_HEADER)).toBeNull();
  });

  it("is the first one noted, also on an error answer, and never one an upstream sent", async () => {
    const { app, headers } = await setup();
    expect((await app.request("/noted/org_first", { headers })).headers.get(RESOURCE_ORG_HEADER)).toBe("org_first");
    const failed = await app.request("/fails", { headers });
    expect(failed.status).toBe(409);
    expect(failed.headers.get(RESOURCE_ORG_HEADER)).toBe("org_c");
    const proxied = await app.request("/upstream", { headers });
    expect(await proxied.text()).toBe("proxied");
    expect(proxied.headers.get(RESOURCE_ORG_HEADER)).toBeNull();
  });

  it("is not carried from one request to another running at the same time", async () => {
    const { app, headers } = await setup();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => app.request(`/noted/org_${i}`, { headers })),
    );
    expect(answers.map((a) => a.headers.get(RESOURCE_ORG_HEADER))).toEqual(answers.map((_, i) => `org_${i}`));
  });
});
