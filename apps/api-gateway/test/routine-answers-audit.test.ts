// Answers that are the normal course of a protocol are not audit records: the console asking for
// the current session while nobody is signed in, and a device flow's polls before the decision.
// Refused credentials stay recorded, and so do the polls that end a flow or are mistakes.
import { AUDIT_RECORDED, type AuditRecorded, OAUTH_ERROR_HEADER, SESSION_COOKIE } from "@agentplane/contracts";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

// Over HTTP the gateway reads what tenancy named from the header record before the answer is built.
describe.each(["in-process", "http"] as const)("routine answers are not audited (%s)", (mode) => {
  let h: Harness;
  const audits: AuditRecorded[] = [];
  beforeAll(async () => {
    h = await startHarness({ tenancyOverHttp: mode === "http" });
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(() => h.close());
  afterEach(() => vi.useRealTimers());

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
  async function startFlow(requestId: string) {
    const started = await send(requestId, 201, "POST", "/v1/auth/device", { token: null, body: {} });
    return started.body as { deviceCode: string; userCode: string };
  }
  const pollFor = (deviceCode: string) => (requestId: string, status: number) =>
    send(requestId, status, "POST", "/v1/auth/device/token", { token: null, body: { deviceCode } });
  const decide = (requestId: string, userCode: string, decision: "approve" | "deny") =>
    send(requestId, 200, "POST", "/device", {
      token: null,
      body: new URLSearchParams({ userCode, decision, token: h.ownerToken }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });

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
    const { deviceCode, userCode } = await startFlow("device-start");
    const poll = pollFor(deviceCode);
    const pending = await poll("device-pending", 400);
    expect(pending.body.error).toBe("authorization_pending");
    // The code named for the gateway stays inside.
    expect(pending.headers.get(OAUTH_ERROR_HEADER)).toBeNull();
    expect((await poll("device-too-soon", 400)).body.error).toBe("slow_down");

    await decide("device-approve", userCode, "approve");
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

  it("records the polls that end a flow or are mistakes: denied, expired, unknown, malformed", async () => {
    const denied = await startFlow("deny-start");
    const pollDenied = pollFor(denied.deviceCode);
    expect((await pollDenied("deny-pending", 400)).body.error).toBe("authorization_pending");
    await decide("deny-decision", denied.userCode, "deny");
    expect((await pollDenied("deny-poll", 400)).body.error).toBe("access_denied");
    expect((await pollFor("no-such-code")("unknown-poll", 400)).body.error).toBe("invalid_grant");
    const malformed = await send("malformed-poll", 400, "POST", "/v1/auth/device/token", { token: null, body: {} });
    expect(malformed.body.error).toBeUndefined();

    const expiring = await startFlow("expire-start");
    const pollExpiring = pollFor(expiring.deviceCode);
    expect((await pollExpiring("expire-pending", 400)).body.error).toBe("authorization_pending");
    // Past the codes' lifetime (the default ten minutes).
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 601_000);
    expect((await pollExpiring("expire-poll", 400)).body.error).toBe("expired_token");
    vi.useRealTimers();

    const refusals = ["deny-poll", "unknown-poll", "malformed-poll", "expire-poll"];
    for (const requestId of refusals) {
      await expect.poll(() => byRequest(requestId), { message: requestId }).toHaveLength(1);
      expect(byRequest(requestId)[0]).toMatchObject({
        action: "pollDeviceAuthorization",
        outcome: "error",
        status: 400,
        principal: { type: "anonymous" },
      });
    }
    expect(byRequest("deny-decision").map((a) => a.action)).toContain("page:/device");
    // Recorded in order: the refusals after them are there, the polls before the decision are not.
    expect([...byRequest("deny-pending"), ...byRequest("expire-pending")]).toEqual([]);
  });
});
