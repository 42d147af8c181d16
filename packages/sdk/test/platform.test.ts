import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentplaneClient, createAgentplaneClient, ProblemError } from "../src/index.ts";
import { startTestPlatform, type TestPlatform } from "./platform.ts";

describe("the SDK against the real platform", () => {
  let p: TestPlatform;
  let sdk: AgentplaneClient;
  let orgId = "";

  beforeAll(async () => {
    p = await startTestPlatform();
    // The token comes through a callback, as the CLI's credential store gives it.
    sdk = createAgentplaneClient({ baseUrl: p.url, token: async () => p.ownerToken });
    const org = await sdk.request("createOrganization", { body: { name: "Acme" } });
    orgId = org.id;
  });
  afterAll(async () => {
    await p?.close();
  });

  it("calls operations by id and through the typed openapi-fetch client", async () => {
    const project = await sdk.request("createProject", { path: { orgId }, body: { name: "payments" } });
    expect(project.id).toMatch(/^prj_/);
    const { data } = await sdk.api.GET("/v1/projects/{projectId}", { params: { path: { projectId: project.id } } });
    expect(data?.name).toBe("payments");
  });

  it("rejects with a ProblemError carrying the platform's request id", async () => {
    const error = await sdk.request("getProject", { path: { projectId: "prj_missing" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemError);
    expect(error).toMatchObject({ status: 404, slug: "not-found" });
    expect((error as ProblemError).requestId).toBeTruthy();
    const unauthenticated = createAgentplaneClient({ baseUrl: p.url, retry: false });
    await expect(unauthenticated.request("listOrganizations")).rejects.toMatchObject({
      status: 401,
      slug: "unauthenticated",
    });
  });

  it("paginates the audit trail's timestamp cursor across three pages", async () => {
    for (const name of ["a", "b", "c", "d", "e"]) {
      await sdk.request("createProject", { path: { orgId }, body: { name: `p-${name}` } });
    }
    // Audit records arrive asynchronously: wait until at least five are there and no more arrive.
    const snapshot = async () =>
      (await sdk.request("listAuditTrail", { path: { orgId }, query: { limit: 100 } })).items.map((r) => r.id);
    let ids: string[] = [];
    for (let i = 0, steady = 0; i < 100 && (ids.length < 5 || steady < 3); i++) {
      const now = await snapshot();
      steady = now.length === ids.length ? steady + 1 : 0;
      ids = now;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(ids.length).toBeGreaterThanOrEqual(5);
    const pages: number[] = [];
    const counting = createAgentplaneClient({
      baseUrl: p.url,
      token: p.ownerToken,
      fetch: async (request) => {
        if (new URL(request.url).pathname.endsWith("/audit-trail")) pages.push(pages.length);
        return fetch(request);
      },
    });
    const seen: string[] = [];
    for await (const record of counting.paginate("listAuditTrail", { path: { orgId }, query: { limit: 2 } })) {
      seen.push(record.id);
    }
    // Every record listed before is walked exactly once (a late arrival may add to the walk).
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(id);
    expect(pages.length).toBeGreaterThanOrEqual(3);
  });
});
