import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

type Problem = { type?: string; errors?: { pointer: string; message: string }[] };

describe("text no service can store is a 400 naming the field, at the edge", () => {
  let h: Harness;
  const audits: AuditRecorded[] = [];

  beforeAll(async () => {
    h = await startHarness();
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(() => h.close());

  const cases: [string, string, string | undefined, string, RegExp][] = [
    [
      "malformed escape in the path",
      "/v1/projects/%E0%A4%A/rotate-keys",
      undefined,
      "/path/projectId",
      /percent-encoded/,
    ],
    ["NUL in the path", "/v1/projects/%00/rotate-keys", undefined, "/path/projectId", /NUL/],
    ["encoded lone surrogate in the path", "/v1/projects/%ED%A0%80/rotate-keys", undefined, "/path/projectId", /UTF-8/],
    ["NUL in a query value", "/v1/orgs?name=a%00", '{"name":"Fine"}', "/query/name", /NUL/],
    ["malformed escape in a query value", "/v1/orgs?x=%ZZ", '{"name":"Fine"}', "/query/x", /percent-encoded/],
    ["NUL in a JSON string", "/v1/orgs", '{"name":"a\\u0000b"}', "/body/name", /NUL/],
    ["a lone surrogate in a name", "/v1/orgs", '{"name":"bad \\udc00"}', "/body/name", /lone surrogates/],
  ];
  for (const [label, path, body, pointer, message] of cases) {
    it(`answers 400 for ${label}`, async () => {
      const res = await call(h, "POST", path, body === undefined ? {} : { body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      const problem = res.body as Problem;
      expect(problem.type).toMatch(/\/validation-failed$/);
      expect(problem.errors?.[0]?.pointer).toBe(pointer);
      expect(problem.errors?.[0]?.message).toMatch(message);
    });
  }

  it("audits a refused call with storable text: the record names the request, NUL replaced", async () => {
    const res = await call(h, "POST", "/v1/projects/%00/rotate-keys", { token: null });
    expect(res.status).toBe(401);
    const bad = await call(h, "POST", "/v1/projects/%00/rotate-keys");
    expect(bad.status).toBe(400);
    await h.bus.drain();
    const ids = [res.headers.get("x-request-id"), bad.headers.get("x-request-id")];
    const records = audits.filter((a) => ids.includes(a.requestId ?? ""));
    expect(records.map((r) => r.status).sort()).toEqual([400, 401]);
    for (const record of records) {
      expect(record.targets.projectId).toBe("\uFFFD");
      expect(JSON.stringify(record)).not.toContain("\\u0000");
      expect(record.path).toBe("/v1/projects/%00/rotate-keys");
    }
  });
});
