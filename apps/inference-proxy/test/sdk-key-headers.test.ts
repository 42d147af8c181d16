import { requirePostgres } from "@agentplane/testkit";
import { AnthropicFoundry } from "@anthropic-ai/foundry-sdk";
import Anthropic from "@anthropic-ai/sdk";
import { AzureOpenAI } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream, USAGE } from "./upstream.ts";

const pg = await requirePostgres();

// The SDKs' own defaults: each sends its key in its own header, with no Authorization header.
describe.skipIf(!pg.available)(`an Agentplane token in the SDKs' key headers on /llm/**${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform({
      cloudA: { kind: "bearer", token: CREDS.bearer },
      cloudBKey: CREDS.cloudBKey,
      cloudAEndpointUrl: up.url,
      cloudAAltBaseUrl: `${up.url}/anthropic`,
      cloudBBaseUrl: `${up.url}/anthropic/v1`,
      cloudBOpenAiBaseUrl: `${up.url}/openai/v1`,
    });
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  /** The last upstream request carried the provider's key and nothing of our token. */
  function expectProviderKeyOnly(auth: string) {
    const seen = up.seen.at(-1);
    expect(seen?.auth).toBe(auth);
    expect(JSON.stringify(seen?.headers)).not.toContain(h.projectToken);
  }

  it("x-api-key as Anthropic's other SDKs send it (Python, JS before 1.0) on cloud-a-alt family-1", async () => {
    // This repository's Anthropic JS SDK (1.x) sends apiKey as a bearer token, which works as is;
    // Anthropic's Python SDK and the JS SDK before 1.0 send exactly these headers instead.
    const res = await fetch(`${h.url}/v1/llm/cloud-a-alt/family-1/us-east-1/anthropic/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": h.projectToken, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { usage: { input_tokens: number } }).usage.input_tokens).toBe(USAGE.input);
    expectProviderKeyOnly("x-api-key");
    expect(up.seen.at(-1)?.headers["x-api-key"]).toBe(CREDS.bearer);
    // And the JS SDK's own default still works.
    const client = new Anthropic({
      baseURL: `${h.url}/v1/llm/cloud-a-alt/family-1/us-east-1/anthropic`,
      apiKey: h.projectToken,
      maxRetries: 0,
    });
    const message = await client.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 20,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.usage.input_tokens).toBe(USAGE.input);
    expectProviderKeyOnly("x-api-key");
  });

  it("Foundry SDK with apiKey (x-api-key) on cloud-b family-1", async () => {
    const client = new AnthropicFoundry({
      baseURL: `${h.url}/v1/llm/cloud-b/family-1/anthropic`,
      apiKey: h.projectToken,
      maxRetries: 0,
    });
    const message = await client.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 20,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.usage.output_tokens).toBe(USAGE.output);
    expectProviderKeyOnly("x-api-key");
    expect(up.seen.at(-1)?.headers["x-api-key"]).toBe(CREDS.cloudBKey);
  });

  it("AzureOpenAI with apiKey (api-key) on cloud-b family-2, deployment in the path", async () => {
    const client = new AzureOpenAI({
      baseURL: `${h.url}/v1/llm/cloud-b/family-2/openai`,
      apiKey: h.projectToken,
      apiVersion: "2024-10-21",
      maxRetries: 0,
    });
    const chat = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(chat.choices[0]?.message.content).toBe("Hello from upstream");
    expect(up.seen.at(-1)?.path).toMatch(/^\/openai\/deployments\/gpt-4o\/chat\/completions\?api-version=/);
    expectProviderKeyOnly("api-key");
  });

  it("takes the key headers on /llm/** only, and a bad key is a 401", async () => {
    // Elsewhere the key headers are not credentials.
    for (const name of ["x-api-key", "api-key"]) {
      const res = await fetch(`${h.url}/v1/inference/providers`, { headers: { [name]: h.projectToken } });
      expect(res.status).toBe(401);
    }
    const before = up.seen.length;
    const res = await fetch(`${h.url}/v1/llm/cloud-b/family-1/anthropic/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": "apl_not_a_token",
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(401);
    expect(up.seen.length).toBe(before);
  });
});
