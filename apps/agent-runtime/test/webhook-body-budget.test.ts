import { type ClientRequest, request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BODY_BYTES_IN_FLIGHT, MAX_WEBHOOK_BODY_BYTES } from "../src/webhooks/body-budget.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

const BEARER = "body-budget-bearer-secret";
const AUTH = { authorization: `Bearer ${BEARER}` };

let fake: FakeModel;
let rt: TestRuntime;
const log = capturingLogger();

beforeAll(async () => {
  fake = await startFakeModel();
  rt = await startTestRuntime(fake, { logger: log.logger });
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  // A verified sender: the bound on unverified deliver-only posts stays out of the way.
  const created = await rt.json("POST", "/agents/webhook-subscriptions", {
    name: "slow",
    deliverOnly: true,
    verification: { kind: "bearer", secret: BEARER },
  });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

/** A post that sends the first `sent` bytes of its body and then waits. */
function heldPost(headers: Record<string, string>, sent = 12): ClientRequest {
  const req = httpRequest(`${rt.url}/agents/webhooks/slow`, {
    method: "POST",
    headers: { "content-type": "application/json", ...AUTH, ...headers },
  });
  req.on("error", () => {});
  req.write(`{"padding":"${"x".repeat(Math.max(0, sent - 12))}`);
  return req;
}

const declared = { "content-length": String(MAX_WEBHOOK_BODY_BYTES) };

describe("bodies the receiver holds at once", () => {
  it("answers 429 with Retry-After once the bytes received reach the bound, and takes posts again after", async () => {
    const held: ClientRequest[] = [];
    // Each holds all but the last 576 bytes of the largest body: together all but 18 KiB of the bound.
    for (let i = 0; i < MAX_BODY_BYTES_IN_FLIGHT / MAX_WEBHOOK_BODY_BYTES; i++) {
      held.push(heldPost(declared, MAX_WEBHOOK_BODY_BYTES - 576));
    }
    const larger = { event_type: "late", padding: "y".repeat(100_000) };
    try {
      // The held bytes have arrived once a body of 100 KB no longer fits.
      const refused = await waitFor(async () => {
        const res = await rt.request("POST", "/agents/webhooks/slow", larger, AUTH);
        return res.status === 429 ? res : undefined;
      }, 10_000);
      expect(refused.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      expect(((await refused.json()) as { detail: string }).detail).toContain("bodies");
    } finally {
      for (const req of held) req.destroy();
    }
    const after = await waitFor(async () => {
      const res = await rt.request("POST", "/agents/webhooks/slow", { ...larger, event_type: "later" }, AUTH);
      return res.status === 200 ? res : undefined;
    }, 5000);
    expect(await after.json()).toMatchObject({ status: "delivered", event: "later" });
  });

  it("counts what arrived, not what was declared: posts that send almost nothing shut no one out", async () => {
    const held: ClientRequest[] = [];
    for (let i = 0; i < 64; i++) held.push(heldPost(i % 2 ? declared : { "transfer-encoding": "chunked" }));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const res = await rt.request("POST", "/agents/webhooks/slow", { event_type: "meanwhile" }, AUTH);
      expect(res.status).toBe(200);
    } finally {
      for (const req of held) req.destroy();
    }
  });
});

describe("a sender that goes away before the body's end", () => {
  it("is no error of the runtime: nothing is logged at error level, and the receiver goes on", async () => {
    const cuts: Array<Record<string, string>> = [{ "transfer-encoding": "chunked" }, { "content-length": "4096" }];
    for (const headers of cuts) {
      const req = heldPost(headers);
      await new Promise((resolve) => setTimeout(resolve, 100));
      req.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(log.records.filter((r) => (r.level as number) >= 50)).toEqual([]);
    const res = await rt.request("POST", "/agents/webhooks/slow", { event_type: "after" }, AUTH);
    expect(res.status).toBe(200);
  });
});
