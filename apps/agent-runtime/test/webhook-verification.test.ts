import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryIdOf, verificationFailure } from "../src/webhooks/verify.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
  rt = await startTestRuntime(fake);
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

const none = { signatureHeader: "X-Signature", timestampHeader: "X-Timestamp", toleranceSeconds: 300 };
const headersOf = (h: Record<string, string>) => (name: string) => h[name.toLowerCase()];

describe("verification of a delivery", () => {
  it("accepts GitHub's documented example signature and refuses a changed body", () => {
    // The example of GitHub's "Validating webhook deliveries" page.
    const settings = { kind: "github" as const, secret: "It's a Secret to Everybody", ...none };
    const signature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    expect(
      verificationFailure(settings, headersOf({ "x-hub-signature-256": signature }), "Hello, World!"),
    ).toBeUndefined();
    expect(verificationFailure(settings, headersOf({ "x-hub-signature-256": signature }), "Hello, World?")).toBe(
      "Bad X-Hub-Signature-256",
    );
    expect(verificationFailure(settings, headersOf({}), "Hello, World!")).toBe("Missing X-Hub-Signature-256");
  });

  it("checks the generic HMAC with its timestamp tolerance", () => {
    const settings = { kind: "hmac" as const, secret: "s3cret-value", ...none, toleranceSeconds: 60 };
    const now = 1_800_000_000_000;
    const sign = (ts: number, body: string) =>
      createHmac("sha256", "s3cret-value").update(`${ts}.${body}`).digest("hex");
    const ts = now / 1000;
    const ok = headersOf({ "x-signature": `sha256=${sign(ts, "{}")}`, "x-timestamp": String(ts) });
    expect(verificationFailure(settings, ok, "{}", now)).toBeUndefined();
    const bare = headersOf({ "x-signature": sign(ts, "{}"), "x-timestamp": String(ts) });
    expect(verificationFailure(settings, bare, "{}", now)).toBeUndefined();
    const old = headersOf({ "x-signature": sign(ts - 61, "{}"), "x-timestamp": String(ts - 61) });
    expect(verificationFailure(settings, old, "{}", now)).toBe("X-Timestamp is outside the tolerance");
    // A signature replayed with a fresh timestamp does not match.
    const replay = headersOf({ "x-signature": sign(ts - 61, "{}"), "x-timestamp": String(ts) });
    expect(verificationFailure(settings, replay, "{}", now)).toBe("Bad X-Signature");
  });

  it("compares GitLab's token and a bearer secret; takes the delivery id from the first header present", () => {
    const gitlab = { kind: "gitlab" as const, secret: "gl-token-123", ...none };
    expect(verificationFailure(gitlab, headersOf({ "x-gitlab-token": "gl-token-123" }), "")).toBeUndefined();
    expect(verificationFailure(gitlab, headersOf({ "x-gitlab-token": "gl-token-124" }), "")).toBe("Bad X-Gitlab-Token");
    const bearer = { kind: "bearer" as const, secret: "shared-secret", ...none };
    expect(verificationFailure(bearer, headersOf({ authorization: "Bearer shared-secret" }), "")).toBeUndefined();
    expect(verificationFailure(bearer, headersOf({ authorization: "Basic c2hhcmVk" }), "")).toBe(
      "Missing Authorization: Bearer",
    );
    expect(deliveryIdOf(headersOf({ "x-gitlab-event-uuid": "u-1", "idempotency-key": "k-1" }))).toBe("u-1");
    expect(deliveryIdOf(headersOf({ "x-webhook-id": "w-1" }))).toBe("w-1");
    expect(deliveryIdOf(headersOf({}))).toBeUndefined();
  });
});

describe("the receiver with a verified subscription", () => {
  const SECRET = "gh-webhook-secret";
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${rt.url}/agents/webhooks/github-ci`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "push", ...headers },
      body,
    });
  const signed = (body: string) => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
  const runCount = async () =>
    (await rt.json<{ items: unknown[] }>("GET", "/agents/webhook-subscriptions/github-ci/runs")).body.items.length;

  it("stores the secret without ever returning it; a kind without a secret is a 400", async () => {
    const refused = await rt.json<{ errors: Array<{ pointer: string }> }>("POST", "/agents/webhook-subscriptions", {
      name: "github-ci",
      verification: { kind: "github" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]?.pointer).toBe("/body/verification/secret");

    const created = await rt.request("POST", "/agents/webhook-subscriptions", {
      name: "github-ci",
      verification: { kind: "github", secret: SECRET },
    });
    const text = await created.text();
    expect(created.status).toBe(201);
    expect(text).not.toContain(SECRET);
    expect(JSON.parse(text).verification).toMatchObject({ kind: "github", secretSet: true });
    // Changing another field keeps the secret.
    const patched = await rt.json<{ verification: { secretSet: boolean } }>(
      "PATCH",
      "/agents/webhook-subscriptions/github-ci",
      { verification: { kind: "github" } },
    );
    expect(patched.body.verification.secretSet).toBe(true);
  });

  it("runs a signed delivery, refuses a bad or missing signature with 401, and runs a redelivery once", async () => {
    const body = JSON.stringify({ ref: "refs/heads/main", commits: [] });
    const bad = await post(body, { "x-hub-signature-256": signed(`${body} `), "x-github-delivery": "d-bad" });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { detail: string }).detail).toContain("Bad X-Hub-Signature-256");
    expect((await post(body, { "x-github-delivery": "d-none" })).status).toBe(401);
    expect(await runCount()).toBe(0);

    const first = await post(body, { "x-hub-signature-256": signed(body), "x-github-delivery": "d-1" });
    expect(first.status).toBe(202);
    const firstBody = (await first.json()) as { runId: string };
    const again = await post(body, { "x-hub-signature-256": signed(body), "x-github-delivery": "d-1" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: "accepted", event: "push", runId: firstBody.runId, duplicate: true });
    // Two copies at once: one run between them.
    const second = JSON.stringify({ ref: "refs/heads/main", commits: [{ id: "c2" }] });
    const [a, b] = await Promise.all([
      post(second, { "x-hub-signature-256": signed(second), "x-github-delivery": "d-2" }),
      post(second, { "x-hub-signature-256": signed(second), "x-github-delivery": "d-2" }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 202]);
    expect(await runCount()).toBe(2);
    await waitFor(async () => {
      const runs = (
        await rt.json<{ items: Array<{ status: string }> }>("GET", "/agents/webhook-subscriptions/github-ci/runs")
      ).body.items;
      return runs.every((r) => r.status === "delivered") || undefined;
    });
    // The bad signature stored nothing: a correctly signed retry of that delivery id runs.
    const third = JSON.stringify({ ref: "refs/heads/main", commits: [{ id: "c3" }] });
    const retried = await post(third, { "x-hub-signature-256": signed(third), "x-github-delivery": "d-bad" });
    expect(retried.status).toBe(202);
  });

  it("answers a captured delivery sent again under another delivery id, or none, as a duplicate", async () => {
    const body = JSON.stringify({ ref: "refs/heads/release", after: "4f1e2d" });
    const first = await post(body, { "x-hub-signature-256": signed(body), "x-github-delivery": "r-1" });
    expect(first.status).toBe(202);
    const { runId } = (await first.json()) as { runId: string };
    const runs = await runCount();
    // The delivery id is not signed: whoever holds the request can change it or leave it out.
    const extras: Record<string, string>[] = [
      { "x-github-delivery": "r-forged" },
      {},
      { "idempotency-key": "r-other" },
    ];
    for (const extra of extras) {
      const replay = await post(body, { "x-hub-signature-256": signed(body), ...extra });
      expect(replay.status).toBe(200);
      expect(await replay.json()).toEqual({ status: "accepted", event: "push", runId, duplicate: true });
    }
    expect(await runCount()).toBe(runs);
  });

  it("refuses a delivery without its signature before reading the body", async () => {
    // A body that never ends: only an answer that does not wait for it can arrive.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${rt.url}/agents/webhooks/github-ci`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-github-event": "push", "transfer-encoding": "chunked" },
      });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body: text });
          req.destroy();
        });
      });
      req.on("error", reject);
      req.write('{"ref":"refs/heads/main","padding":"');
      setTimeout(() => reject(new Error("no answer while the body was still coming")), 3000).unref();
    });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body).detail).toContain("Missing X-Hub-Signature-256");
  });

  it("tells a sender posting a form, not JSON, so rather than calling its signature bad", async () => {
    const form = `payload=${encodeURIComponent(JSON.stringify({ ref: "refs/heads/main" }))}`;
    const res = await fetch(`${rt.url}/agents/webhooks/github-ci`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-github-event": "push",
        "x-hub-signature-256": signed(form),
      },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toBe(
      "The body must be a JSON object sent as application/json",
    );
  });

  it("checks the signature over the bytes as sent, not over their decoding", async () => {
    // Not valid UTF-8 (a Latin-1 "é"), and a byte-order mark: both change in decoding.
    for (const [id, bytes] of [
      ["d-latin1", Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('"}')])],
      ["d-bom", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"bom"}')])],
    ] as const) {
      const sign = (b: Uint8Array) => `sha256=${createHmac("sha256", SECRET).update(b).digest("hex")}`;
      const send = (signature: string, delivery: string) =>
        fetch(`${rt.url}/agents/webhooks/github-ci`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-github-event": "push",
            "x-hub-signature-256": signature,
            "x-github-delivery": delivery,
          },
          body: bytes,
        });
      expect((await send(sign(bytes), id)).status, id).toBe(202);
      // A signature over the decoded text is not one over these bytes.
      const decoded = Buffer.from(new TextDecoder().decode(bytes));
      expect((await send(sign(decoded), `${id}-decoded`)).status, id).toBe(401);
    }
  });

  it("turning verification off accepts unsigned deliveries again", async () => {
    await rt.json("PATCH", "/agents/webhook-subscriptions/github-ci", { verification: { kind: "none" } });
    const res = await post(JSON.stringify({ ok: true }), {});
    expect(res.status).toBe(202);
    const sub = await rt.json<{ verification: { kind: string; secretSet: boolean } }>(
      "GET",
      "/agents/webhook-subscriptions/github-ci",
    );
    expect(sub.body.verification).toMatchObject({ kind: "none", secretSet: false });
  });
});

describe("the receiver with a generic-HMAC subscription", () => {
  const SECRET = "hmac-webhook-secret";
  const signedHeaders = (ts: number, body: string) => ({
    "x-timestamp": String(ts),
    "x-signature": `sha256=${createHmac("sha256", SECRET).update(`${ts}.${body}`).digest("hex")}`,
  });
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${rt.url}/agents/webhooks/signed-alerts`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });

  it("answers a replayed signed delivery as a duplicate, whatever delivery id it carries", async () => {
    const created = await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "signed-alerts",
      deliverTo: "Chat",
      verification: { kind: "hmac", secret: SECRET },
    });
    expect(created.status).toBe(201);
    const body = JSON.stringify({ event_type: "alert", severity: "high" });
    const ts = Math.floor(Date.now() / 1000);
    const first = await post(body, signedHeaders(ts, body));
    expect(first.status).toBe(202);
    const { runId } = (await first.json()) as { runId: string };

    // The captured request sent again inside the tolerance, bare and with a made-up delivery id.
    const extras: Record<string, string>[] = [{}, { "x-webhook-id": "made-up-1" }, { "idempotency-key": "made-up-2" }];
    for (const extra of extras) {
      const replay = await post(body, { ...signedHeaders(ts, body), ...extra });
      expect(replay.status).toBe(200);
      expect(await replay.json()).toEqual({ status: "accepted", event: "alert", runId, duplicate: true });
    }
    // The sender signing the same payload anew is a new delivery.
    const fresh = await post(body, signedHeaders(ts + 1, body));
    expect(fresh.status).toBe(202);
    const runs = await rt.json<{ items: unknown[] }>("GET", "/agents/webhook-subscriptions/signed-alerts/runs");
    expect(runs.body.items).toHaveLength(2);
  });
});
