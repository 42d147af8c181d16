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

  it("records a device flow's start, decision and token, but none of the polls before the decision", async () => {
    const started = await send("device-start", 201, "POST", "/v1/auth/device", { token: null, body: {} });
    const { deviceCode, userCode } = started.body as { deviceCode: string; userCode: string };
    const poll = (requestId: string, status: number) =>
      send(requestId, status, "POST", "/v1/auth/device/token", { token: null, body: { deviceCode } });
    expect((await poll("device-pending", 400)).body.error).toBe("authorization_pending");
    expect((await poll("device-too-soon", 400)).body.error).toBe("slow_down");

    const form = new URLSearchParams({ userCode, decision: "approve", token: h.ownerToken }).toString();
    await send("device-approve", 200, "POST", "/device", {
      token: null,
      body: form,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    const approved = await poll("device-token", 200);
    expect(approved.body.token).toEqual(expect.any(String));

    await expect.poll(() => byRequest("device-token")).toHaveLength(1);
    expect(byRequest("device-token")[0]).toMatchObject({ action: "pollDeviceAuthorization", outcome: "success" });
    expect(byRequest("device-start")).toHaveLength(1);
    // The decision: the page's request, and the token it made for the device.
    expect(byRequest("device-approve").map((a) => a.action)).toEqual(
      expect.arrayContaining(["page:/device", "api_token.created"]),
    );
    // Recorded in order: the later requests' records are there, the polls before the decision's are not.
    expect([...byRequest("device-pending"), ...byRequest("device-too-soon")]).toEqual([]);
  });
});
