import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InferencePlatform, manualClock } from "./harness.ts";
import type { FakeUpstream } from "./upstream.ts";
import { startWithUpstream } from "./with-upstream.ts";

const pg = await requirePostgres();
const messages = [{ role: "user", content: "hi" }];

/**
 * An output cap (or a number of answers) so large that the estimate passes the integers a JSON
 * number holds exactly: the call is judged as any other that costs more than a limit allows,
 * never refused by the spend API's own validation as a bare 400.
 */
describe.skipIf(!pg.available)(`estimates past the safe integers${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;
  let close: () => Promise<void>;
  const clock = manualClock();

  beforeAll(async () => {
    ({ up, h, close } = await startWithUpstream({ spend: { clock } }));
  });
  afterAll(async () => {
    await close?.();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${h.url}/v1/llm/cloud-b/${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.projectToken}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
    });
  const hugeCap = () =>
    post("family-1/anthropic/v1/messages", {
      model: "claude-haiku-4-5",
      max_tokens: Number.MAX_SAFE_INTEGER,
      messages,
    });
  const manyAnswers = () =>
    post("family-2/openai/v1/chat/completions", { model: "gpt-4o", max_tokens: 10, n: 1e300, messages });

  it("with no limit, such a call is forwarded (the provider judges its cap)", async () => {
    const seen = up.seen.length;
    expect((await hugeCap()).status).toBe(200);
    expect((await manyAnswers()).status).toBe(200);
    expect(up.seen.length).toBe(seen + 2);
  });

  it("under a limit, it is a 429 spending-limit-reached and is not forwarded", async () => {
    const created = await h.call("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: 1_000_000_000, period: "monthly" },
    });
    expect(created.status).toBe(201);
    clock.advance(2000);
    const seen = up.seen.length;
    for (const call of [hugeCap, manyAnswers]) {
      const res = await call();
      expect(res.status).toBe(429);
      const body = (await res.json()) as { type: string; estimatedUsd: number };
      expect(body.type).toMatch(/spending-limit-reached$/);
      expect(body.estimatedUsd).toBeGreaterThan(1_000_000_000);
    }
    expect(up.seen.length).toBe(seen);
  });
});
