import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verificationFailure } from "../src/webhooks/verify.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

// PagerDuty v3 signing secrets are 64 characters; these two stand for the old and the new one.
const SECRET = "pd-signing-secret-6f1c0b2a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d";
const OTHER = "pd-signing-secret-00000000000000000000000000000000000000000000000000";
const BODY = readFileSync(new URL("./fixtures/pagerduty-v3.json", import.meta.url));
const v1 = (secret: string, body: string | Uint8Array) =>
  `v1=${createHmac("sha256", secret).update(body).digest("hex")}`;

const settings = {
  kind: "pagerduty" as const,
  secret: SECRET,
  signatureHeader: "X-Signature",
  timestampHeader: "X-Timestamp",
  toleranceSeconds: 300,
};
const check = (signature: string | undefined, body: string | Uint8Array = BODY) =>
  verificationFailure(settings, (name) => (name === "x-pagerduty-signature" ? signature : undefined), body);

describe("PagerDuty v3 signatures", () => {
  it("accepts the v1 HMAC of the body with the signing secret", () => {
    expect(check(v1(SECRET, BODY))).toBeUndefined();
    expect(check(v1(SECRET, BODY).toUpperCase().replace("V1=", "v1="))).toBeUndefined();
  });

  it("refuses a wrong secret and a changed body", () => {
    expect(check(v1(OTHER, BODY))).toBe("Bad X-PagerDuty-Signature");
    const tampered = Buffer.from(BODY.toString("utf8").replace("PGR0VU2", "PGR0VU3"));
    expect(tampered.equals(BODY)).toBe(false);
    expect(check(v1(SECRET, BODY), tampered)).toBe("Bad X-PagerDuty-Signature");
  });

  it("refuses a missing header and one without a v1 signature", () => {
    expect(check(undefined)).toBe("Missing X-PagerDuty-Signature");
    expect(check("  ")).toBe("Missing X-PagerDuty-Signature");
    const hex = v1(SECRET, BODY).slice(3);
    expect(check(`v0=${hex}`)).toBe("Malformed X-PagerDuty-Signature: no v1= signature");
    expect(check(hex)).toBe("Malformed X-PagerDuty-Signature: no v1= signature");
    expect(check("v1=")).toBe("Malformed X-PagerDuty-Signature: no v1= signature");
    expect(check(`v1=${hex.slice(0, 63)}`)).toBe("Bad X-PagerDuty-Signature");
  });

  it("takes any one of several signatures during a secret rotation, spaces around them allowed", () => {
    expect(check(`${v1(OTHER, BODY)},${v1(SECRET, BODY)}`)).toBeUndefined();
    expect(check(` ${v1(OTHER, BODY)} , ${v1(SECRET, BODY)} `)).toBeUndefined();
    expect(check(`${v1(SECRET, BODY)},${v1(OTHER, BODY)}`)).toBeUndefined();
    expect(check(`v0=abc,${v1(SECRET, BODY)}`)).toBeUndefined();
    expect(check(`${v1(OTHER, BODY)},${v1(OTHER, "{}")}`)).toBe("Bad X-PagerDuty-Signature");
  });
});

describe("the receiver with a PagerDuty subscription", () => {
  let fake: FakeModel;
  let rt: TestRuntime;
  const captured = capturingLogger();

  beforeAll(async () => {
    fake = await startFakeModel();
    rt = await startTestRuntime(fake, { logger: captured.logger });
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  });
  afterAll(async () => {
    await rt.close();
    await fake.close();
  });

  const post = (signature: string | undefined, id: string, body: Uint8Array = BODY) =>
    fetch(`${rt.url}/agents/webhooks/pd-incidents`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-webhook-id": id,
        ...(signature === undefined ? {} : { "x-pagerduty-signature": signature }),
      },
      body,
    });

  it("runs a signed delivery and refuses the others with 401, logging neither secret nor signature", async () => {
    const created = await rt.request("POST", "/agents/webhook-subscriptions", {
      name: "pd-incidents",
      deliverTo: "Chat",
      verification: { kind: "pagerduty", secret: SECRET },
    });
    expect(created.status).toBe(201);
    const text = await created.text();
    expect(text).not.toContain(SECRET);
    expect(JSON.parse(text).verification).toMatchObject({ kind: "pagerduty", secretSet: true });

    const tampered = Buffer.from(BODY.toString("utf8").replace("PGR0VU2", "PGR0VU3"));
    const hex = v1(SECRET, BODY).slice(3);
    const refused: Array<[string | undefined, Uint8Array, string]> = [
      [v1(OTHER, BODY), BODY, "Bad X-PagerDuty-Signature"],
      [v1(SECRET, BODY), tampered, "Bad X-PagerDuty-Signature"],
      [undefined, BODY, "Missing X-PagerDuty-Signature"],
      [`v0=${hex}`, BODY, "Malformed X-PagerDuty-Signature"],
    ];
    for (const [i, [signature, body, detail]] of refused.entries()) {
      const res = await post(signature, `refused-${i}`, body);
      expect(res.status, detail).toBe(401);
      const problem = (await res.json()) as { detail: string };
      expect(problem.detail).toContain(detail);
      expect(problem.detail).not.toContain(hex);
    }
    const runs = await rt.json<{ items: unknown[] }>("GET", "/agents/webhook-subscriptions/pd-incidents/runs");
    expect(runs.body.items).toHaveLength(0);

    const rotated = await post(`${v1(OTHER, BODY)}, ${v1(SECRET, BODY)}`, "pd-1");
    expect(rotated.status).toBe(202);
    // PagerDuty's X-Webhook-Id makes its retry of the same delivery a duplicate.
    const retried = await post(v1(SECRET, BODY), "pd-1");
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ status: "accepted", duplicate: true });

    await waitFor(async () => {
      const { items } = (
        await rt.json<{ items: Array<{ status: string }> }>("GET", "/agents/webhook-subscriptions/pd-incidents/runs")
      ).body;
      return items.length === 1 && items.every((r) => r.status === "delivered") ? true : undefined;
    });
    // Whatever the runtime logs (at debug) about these deliveries holds neither secret nor signature.
    const logged = JSON.stringify(captured.records);
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain(hex);
  });
});
