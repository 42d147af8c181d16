import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type InferencePlatform, manualClock, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream, USAGE } from "./upstream.ts";

const pg = await requirePostgres();

interface Status {
  items: { limitId: string; spentUsd: number; reservedUsd: number }[];
}
interface Problem {
  type: string;
  detail: string;
  estimatedUsd: number;
  remainingUsd: number;
  unseenInput?: string[];
}

// claude-haiku-4-5: $1 input, $5 output, $0.10 cache read, $1.25 cache write per million tokens.
const HAIKU_COST = Math.round(USAGE.input * 1 + USAGE.output * 5 + USAGE.cacheRead * 0.1 + USAGE.cacheWrite * 1.25);
const byUrl = {
  model: "claude-haiku-4-5",
  max_tokens: 16,
  messages: [
    {
      role: "user",
      content: [
        { type: "document", source: { type: "url", url: "https://example.com/300-pages.pdf" } },
        { type: "text", text: "Summarize it" },
      ],
    },
  ],
};
const webSearch = {
  model: "claude-haiku-4-5",
  max_tokens: 16,
  tools: [{ type: "web_search_20250305", name: "web_search" }],
  messages: [{ role: "user", content: "What happened today?" }],
};
const plain = { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };

describe.skipIf(!pg.available)(`input the body does not show, under a spending limit${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;
  const clock = manualClock();

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform(
      {
        cloudA: { kind: "bearer", token: CREDS.bearer },
        cloudBKey: CREDS.cloudBKey,
        cloudAEndpointUrl: up.url,
        cloudBBaseUrl: `${up.url}/anthropic/v1`,
        cloudBOpenAiBaseUrl: `${up.url}/openai/v1`,
      },
      { spend: { clock } },
    );
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  const post = (body: unknown) =>
    fetch(`${h.url}/v1/llm/cloud-b/family-1/anthropic/v1/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.projectToken}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
    });
  const chat = (body: unknown) =>
    fetch(`${h.url}/v1/llm/cloud-b/family-2/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.projectToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const spent = async () => {
    await h.drainUsage();
    const r = await h.call<{ total: { costMicroUsd: number } }>("GET", `/v1/orgs/${h.orgId}/usage-costs`, {
      token: h.adminToken,
    });
    return r.body.total.costMicroUsd;
  };
  /** A monthly limit with `leftMicroUsd` left of it, applied from the next call on. */
  const limitLeaving = async (leftMicroUsd: number) => {
    const created = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: ((await spent()) + leftMicroUsd) / 1e6, period: "monthly" },
    });
    expect(created.status).toBe(201);
    clock.advance(1000);
    return created.body.id;
  };
  const removeLimit = (id: string) =>
    h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${id}`, { token: h.adminToken });

  it("where no limit applies, calls referencing input are forwarded as any other", async () => {
    const before = up.seen.length;
    for (const body of [byUrl, webSearch]) {
      const res = await post(body);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(up.seen.length).toBe(before + 2);
  });

  it("with $0.05 left, a document by URL, a file id and a server tool are refused, naming the member", async () => {
    // Haiku's 200,000-token window at $1/M is $0.20, gpt-4o's 128,000 at $2.50/M $0.32; the body
    // alone estimated a few hundred tokens.
    const id = await limitLeaving(50_000);
    try {
      const calls = up.seen.length;
      const cases: [Promise<Response>, string][] = [
        [post(byUrl), 'source.type "url"'],
        [post(webSearch), 'tools[0].type "web_search_20250305"'],
        [
          chat({
            model: "gpt-4o",
            max_tokens: 16,
            messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-abc" } }] }],
          }),
          "file_id",
        ],
        [
          chat({ model: "gpt-4o", max_tokens: 16, previous_response_id: "resp_1", messages: [] }),
          "previous_response_id",
        ],
      ];
      for (const [call, member] of cases) {
        const res = await call;
        expect(res.status, member).toBe(429);
        const problem = (await res.json()) as Problem;
        expect(problem.type).toMatch(/spending-limit-reached$/);
        expect(problem.unseenInput).toEqual([member]);
        expect(problem.detail).toContain(`context window of input for ${member}`);
        expect(problem.estimatedUsd).toBeGreaterThan(problem.remainingUsd);
      }
      expect(up.seen.length).toBe(calls);
      // The same model, the input in the body: estimated by its size, and it fits.
      const res = await post(plain);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    } finally {
      await removeLimit(id);
    }
  });

  it("with room for the bound, the call runs and is charged its real usage, not the bound", async () => {
    const id = await limitLeaving(5_000_000);
    try {
      const before = await spent();
      const res = await post(byUrl);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await eventually(async () => {
        await h.drainUsage();
        const status = await h.call<Status>("GET", `/v1/orgs/${h.orgId}/spending-limits/status`, {
          token: h.adminToken,
        });
        return status.body.items.every((s) => s.reservedUsd === 0);
      }, "the reservation settled");
      expect((await spent()) - before).toBe(HAIKU_COST);
    } finally {
      await removeLimit(id);
    }
  });
});
