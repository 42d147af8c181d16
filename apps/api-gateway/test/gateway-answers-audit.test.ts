// Requests the gateway answers itself (too large, rate limited, service not deployed) are audited
// like those a service answers: every mutating request becomes a record.
import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

describe("requests the gateway answers itself are audited", () => {
  let h: Harness;
  const audits: AuditRecorded[] = [];
  beforeAll(async () => {
    h = await startHarness({ rateLimit: 2 });
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(() => h.close());

  const recorded = (status: number, path: string) =>
    expect.poll(() => audits.filter((a) => a.status === status && a.path === path).length).toBe(1);

  it("records a 413 for a declared body over the limit, a 503 for a service not deployed and a 429", async () => {
    const big = await fetch(`${h.url}/v1/orgs`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.ownerToken}`,
        "content-type": "application/json",
        "content-length": String(2 * 1024 * 1024),
      },
      body: "x".repeat(2 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
    await recorded(413, "/v1/orgs");

    // This harness deploys tenancy only: a governance route answers 503 from the gateway.
    const missing = await call(h, "POST", "/v1/orgs/org_x/policies", { body: { name: "p", cedar: "" } });
    expect(missing.status).toBe(503);
    await recorded(503, "/v1/orgs/org_x/policies");

    // The 503 above used one of the two requests allowed per minute; the next is allowed, the one after limited.
    expect((await call(h, "POST", "/v1/orgs", { body: { name: "second" } })).status).toBe(201);
    const limited = await call(h, "POST", "/v1/orgs", { body: { name: "third" } });
    expect(limited.status).toBe(429);
    await recorded(429, "/v1/orgs");
    expect(audits.find((a) => a.status === 429)?.outcome).toBe("error");
  });
});
