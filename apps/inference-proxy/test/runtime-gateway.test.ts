import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { silentLogger } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalRuntime, startLocalRuntime } from "../../platform/src/runtime.ts";
import { eventually, type InferencePlatform, manualClock, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream, USAGE } from "./upstream.ts";

const pg = await requirePostgres();
// The runtime's default model, claude-sonnet-4-5: $3 / $15 / $0.30 / $3.75 per million tokens.
const SONNET_COST = Math.round(USAGE.input * 3 + USAGE.output * 15 + USAGE.cacheRead * 0.3 + USAGE.cacheWrite * 3.75);

describe.skipIf(!pg.available)(`the npm start runtime in gateway mode${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;
  let runtime: LocalRuntime | undefined;
  const clock = manualClock();
  const rawEnv = { CLOUD_A_BEARER_TOKEN: CREDS.bearer, CLOUD_A_REGION: "us-east-1", LOG_LEVEL: "silent" };

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform(
      { cloudA: { kind: "bearer", token: CREDS.bearer }, cloudAEndpointUrl: up.url },
      { spend: { clock } },
    );
  });
  afterAll(async () => {
    await runtime?.close();
    await h?.close();
    await up?.close();
  });

  const start = () =>
    startLocalRuntime({
      env: { ...h.env, AGENT_RUNTIME_PORT: 0, AGENT_RUNTIME_HOST: "127.0.0.1" },
      rawEnv,
      dataDir: h.dataDir,
      publicUrl: h.url,
      platform: h.platform,
      logger: silentLogger(),
    });
  const rt = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${(runtime as LocalRuntime).url}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as T };
  };
  const mainTexts = async () => {
    const threads = await rt<{ items: { id: string; main: boolean }[] }>("GET", "/agents/threads");
    const main = threads.body.items.find((t) => t.main)?.id;
    const messages = await rt<{ items: { text: string }[] }>("GET", `/agents/threads/${main}/messages`);
    return messages.body.items.map((m) => m.text);
  };

  it("provisions a project token (encrypted in the data dir), and a webhook run reaches the model and is priced", async () => {
    runtime = await start();
    const identity = runtime.identity;
    expect(identity?.token).toMatch(/^apl_/);
    const file = join(h.dataDir, "agent-runtime-identity.json");
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, "utf8")).not.toContain(identity?.token);

    expect((await rt("PUT", "/agents/webhooks/enabled", { enabled: true })).status).toBe(200);
    expect((await rt("POST", "/agents/webhook-subscriptions", { name: "ci" })).status).toBe(201);
    expect((await rt("POST", "/agents/webhooks/ci", { event: "push" })).status).toBe(202);
    await eventually(async () => (await mainTexts()).some((t) => t.includes("Hello from upstream")), "the answer");
    expect(up.seen.at(-1)?.path).toMatch(/^\/model\/.+\/invoke-with-response-stream$/);

    const orgId = identity?.orgId as string;
    await eventually(async () => {
      await h.drainUsage();
      const costs = await h.call<{ total: { requests: number } }>("GET", `/v1/orgs/${orgId}/usage-costs`);
      return costs.body.total.requests >= 1;
    }, "the run's usage");
    const costs = await h.call<{ groups: { key: string; costMicroUsd: number }[]; total: { costMicroUsd: number } }>(
      "GET",
      `/v1/orgs/${orgId}/usage-costs?groupBy=project`,
    );
    expect(costs.body.groups).toEqual([
      expect.objectContaining({ key: identity?.projectId, costMicroUsd: SONNET_COST }),
    ]);
  });

  it("gives the runtime a token scoped to llm:invoke: model calls work, every other route is 403", async () => {
    const identity = runtime?.identity;
    const token = identity?.token as string;
    const invoke = await h.call("POST", "/v1/llm/cloud-a/us-east-1/model/anthropic.claude-haiku-4-5/invoke", {
      token,
      body: { anthropic_version: "bedrock-2023-05-31", max_tokens: 8, messages: [{ role: "user", content: "hi" }] },
    });
    expect(invoke.status, JSON.stringify(invoke.body)).toBe(200);
    const providers = await h.call("GET", "/v1/inference/providers", { token });
    expect(providers.status).toBe(200);
    // Its role (member, developer on its project) would allow these; its scope does not.
    for (const [method, path] of [
      ["GET", "/v1/auth/me"],
      ["GET", `/v1/orgs/${identity?.orgId}`],
      ["GET", `/v1/projects/${identity?.projectId}`],
      ["GET", `/v1/projects/${identity?.projectId}/sandboxes`],
      ["GET", `/v1/orgs/${identity?.orgId}/usage-costs`],
    ] as const) {
      const r = await h.call(method, path, { token });
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(403);
    }
    // Nor can it mint itself a wider token.
    const minted = await h.call("POST", `/v1/orgs/${identity?.orgId}/api-tokens`, {
      token,
      body: { name: "wider", scopes: ["projects:read"] },
    });
    expect(minted.status).toBe(403);
    // The restriction is on the token itself, as tenancy shows it.
    const listed = await h.call<{ items: { name: string; scopes?: string[] }[] }>(
      "GET",
      `/v1/orgs/${identity?.orgId}/api-tokens`,
    );
    expect(listed.body.items.find((t) => t.name === "agent-runtime")?.scopes).toEqual(["llm:invoke"]);
  });

  it("reuses the token across restarts; a spending limit turns into a brief failure notice", async () => {
    const first = runtime?.identity;
    await runtime?.close();
    runtime = await start();
    expect(runtime.identity).toEqual(first);

    const limit = await h.call<{ id: string }>("POST", `/v1/orgs/${first?.orgId}/spending-limits`, {
      body: { amountUsd: 0, period: "monthly" },
    });
    expect(limit.status).toBe(201);
    // Past the proxy's 1 s trust in audit's earlier "no limit here".
    clock.advance(1000);
    expect((await rt("POST", "/agents/webhooks/ci", { event: "deploy" })).status).toBe(202);
    let notice = "";
    await eventually(
      async () => {
        notice = (await mainTexts()).find((t) => t.includes("failed:")) ?? "";
        return notice !== "";
      },
      "the failure notice",
      30_000,
    ).catch(async (err) => {
      const runs = await rt("GET", "/agents/webhook-subscriptions/ci/runs");
      throw new Error(`${(err as Error).message}: ${JSON.stringify(await mainTexts())} ${JSON.stringify(runs.body)}`);
    });
    expect(notice).toContain("status 429");
    expect(notice).toContain("Spending Limit Reached");
    expect(notice).toMatch(/Run \S+\.$/);
    expect(notice).not.toContain("{");
  }, 60_000);
});
