// Answers that are the normal course of a protocol are not audit records: the console asking for
// the current session while nobody is signed in, and a device flow's polls before the decision.
// Refused credentials stay recorded.
import { AUDIT_RECORDED, type AuditRecorded, SESSION_COOKIE } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

describe("routine answers are not audited", () => {
  let h: Harness;
  const audits: AuditRecorded[] = [];
  beforeAll(async () => {
    h = await startHarness();
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(() => h.close());

  const byRequest = (requestId: string) => audits.filter((a) => a.requestId === requestId);
  /** A request with its own request id, expecting `status`. */
  async function send(
    requestId: string,
    status: number,
    method: string,
    path: string,
    options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
  ) {
    const res = await call(h, method, path, { ...options, headers: { ...options.headers, "x-request-id": requestId } });
    expect(res.status, `${requestId}: ${JSON.stringify(res.body)}`).toBe(status);
    return res;
  }

  it("records no denial for the current session asked for without credentials, but one for bad ones", async () => {
    await send("session-signed-out", 401, "GET", "/v1/auth/session", { token: null });
    await send("session-bad-token", 401, "GET", "/v1/auth/session", { token: "not-a-token" });
    await send("session-bad-cookie", 401, "GET", "/v1/auth/session", {
      token: null,
      headers: { cookie: `${SESSION_COOKIE}=aps_nosuchsession` },
    });
    await expect.poll(() => byRequest("session-bad-token")).toHaveLength(1);
    await expect.poll(() => byRequest("session-bad-cookie")).toHaveLength(1);
    expect(byRequest("session-bad-token")[0]).toMatchObject({
      action: "getCurrentSession",
      outcome: "denied",
      status: 401,
      principal: { type: "anonymous" },
    });
    // Recorded in order: the records of the later requests are there, the signed-out one is not.
    expect(byRequest("session-signed-out")).toEqual([]);
  });
});
