// A service answering in process hands the gateway a Response whose headers are often a plain
// record; the gateway adds its headers to that record and takes out the organization the service
// named (for the audit record) without building Headers. Whatever shape the answer has, the caller
// must see the same headers, and the record must name the same organization.
import { AUDIT_RECORDED, type AuditRecorded, RESOURCE_ORG_HEADER } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adjustResponseHeaders } from "../src/response-headers.ts";
import { call, type Harness, startHarness } from "./harness.ts";

const LLM = "/v1/llm/cloud-b/family-1/anthropic/v1/messages";
/** One record object answered with every time: the gateway must never change it. */
const SHARED = Object.freeze({ "Content-Type": "application/json", [RESOURCE_ORG_HEADER]: "org_shared" });

describe("answers of services in process", () => {
  let h: Harness;
  const audits: AuditRecorded[] = [];
  beforeAll(async () => {
    const answer = async (request: Request): Promise<Response> => {
      switch (request.headers.get("x-shape")) {
        case "shared":
          return new Response('{"ok":true}', { headers: SHARED });
        case "none":
          return new Response("plain text");
        case "headers":
          return new Response("{}", {
            headers: new Headers({ "content-type": "application/json", [RESOURCE_ORG_HEADER]: "org_h" }),
          });
        case "created":
          return new Response(JSON.stringify({ id: "cls_new" }), {
            status: 201,
            headers: { "content-type": "application/json", [RESOURCE_ORG_HEADER]: "org_created" },
          });
        default:
          return new Response(null, { status: 204 });
      }
    };
    h = await startHarness({
      extraTargets: {
        inference: { fetch: answer, ready: async () => true },
        connections: { fetch: answer, ready: async () => true },
      },
    });
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(() => h.close());

  const recordOf = (requestId: string) =>
    expect
      .poll(() => audits.find((a) => a.requestId === requestId))
      .toBeDefined()
      .then(() => audits.find((a) => a.requestId === requestId) as AuditRecorded);

  it("the gateway's own Response is of the Node server's lightweight kind, so the record is changed in place", () => {
    const response = new Response("{}", { headers: { "Content-Type": "application/json" } });
    let seen: Record<string, unknown> = {};
    expect(
      adjustResponseHeaders(response, (headers) => {
        seen = { ...headers };
        headers["x-added"] = "1";
      }),
    ).toBe(true);
    expect(seen).toEqual({ "content-type": "application/json" });
    expect(response.headers.get("x-added")).toBe("1");
  });

  for (const shape of ["shared", "headers", "none", "empty"] as const) {
    it(`adds the request id and rate-limit headers and keeps the organization inside (${shape})`, async () => {
      const res = await call(h, "POST", LLM, { body: { model: "m" }, headers: { "x-shape": shape } });
      expect(res.status).toBe(shape === "empty" ? 204 : 200);
      const requestId = res.headers.get("x-request-id") as string;
      expect(requestId).toMatch(/^[\w-]{10,}$/);
      expect(res.headers.get("ratelimit-policy")).toContain("q=10000");
      expect(res.headers.get(RESOURCE_ORG_HEADER)).toBeNull();
      if (shape === "shared") expect(res.headers.get("content-type")).toBe("application/json");
      if (shape === "none") expect(res.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
      const record = await recordOf(requestId);
      if (shape === "shared") expect(record.orgId).toBe("org_shared");
      if (shape === "headers") expect(record.orgId).toBe("org_h");
    });
  }

  it("leaves a record the service answers with every time as it was", () => {
    expect(SHARED).toEqual({ "Content-Type": "application/json", [RESOURCE_ORG_HEADER]: "org_shared" });
  });

  it("answers a 201 with the gateway's headers too, and learns the organization of what was created", async () => {
    const res = await call(h, "POST", "/v1/projects/prj_1/clusters", {
      body: { name: "c" },
      headers: { "x-shape": "created" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: "cls_new" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get(RESOURCE_ORG_HEADER)).toBeNull();
    expect((await recordOf(res.headers.get("x-request-id") as string)).orgId).toBe("org_created");
  });
});
