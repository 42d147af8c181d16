import { createRequire } from "node:module";
import { requirePostgres } from "@agentplane/testkit";
import { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk";
import { AnthropicFoundry } from "@anthropic-ai/foundry-sdk";
import Anthropic from "@anthropic-ai/sdk";
import { BedrockRuntimeClient, ConverseStreamCommand, InvokeModelCommand } from "@aws-sdk/client-bedrock-runtime";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream, USAGE } from "./upstream.ts";

// The AWS SDK speaks HTTP/2 to Bedrock by default; the gateway is HTTP/1.1, as most proxies are.
const awsRequire = createRequire(createRequire(import.meta.url).resolve("@aws-sdk/client-bedrock-runtime"));
const { NodeHttpHandler } = awsRequire("@smithy/node-http-handler") as { NodeHttpHandler: new () => unknown };

const SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
// claude-sonnet-4-5: $3 input, $15 output, $0.30 cache read, $3.75 cache write per million tokens.
const SONNET_COST = Math.round(USAGE.input * 3 + USAGE.output * 15 + USAGE.cacheRead * 0.3 + USAGE.cacheWrite * 3.75);

interface UsageCosts {
  total: { requests: number; inputTokens: number; outputTokens: number; cacheReadTokens: number; costMicroUsd: number };
}

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`official SDKs through the gateway, bearer and key headers${pg.reason}`, () => {
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

  const usageCosts = async () =>
    (await h.call<UsageCosts>("GET", `/v1/orgs/${h.orgId}/usage-costs`, { token: h.adminToken })).body;

  it("AnthropicBedrock: invoke and invoke-with-response-stream, priced with cache tokens", async () => {
    const client = new AnthropicBedrock({
      baseURL: `${h.url}/v1/llm/cloud-a/us-east-1`,
      awsRegion: "us-east-1",
      apiKey: h.projectToken,
    });
    const message = await client.messages.create({
      model: SONNET,
      max_tokens: 100,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.content[0]).toMatchObject({ type: "text", text: "Hello from upstream" });
    const streamed = await client.messages
      .stream({ model: SONNET, max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
      .finalMessage();
    expect(streamed.content[0]).toMatchObject({ text: "Hello from upstream" });
    const seen = up.seen.filter((s) => s.path.startsWith("/model/"));
    // The path reaches the provider as the SDK wrote it.
    expect(seen.map((s) => decodeURIComponent(s.path))).toEqual([
      `/model/${SONNET}/invoke`,
      `/model/${SONNET}/invoke-with-response-stream`,
    ]);
    // The provider's key was added; our token never left the control plane.
    for (const s of seen) {
      expect(s.auth).toBe("bearer");
      expect(JSON.stringify(s.headers)).not.toContain(h.projectToken);
    }
    await eventually(async () => {
      await h.drainUsage();
      return (await usageCosts()).total.requests === 2;
    }, "two priced requests");
    const costs = await usageCosts();
    expect(costs.total).toMatchObject({
      inputTokens: 2 * USAGE.input,
      outputTokens: 2 * USAGE.output,
      cacheReadTokens: 2 * USAGE.cacheRead,
      costMicroUsd: 2 * SONNET_COST,
    });
  });

  it("AWS SDK BedrockRuntimeClient: converse-stream and embeddings through invoke", async () => {
    const client = new BedrockRuntimeClient({
      region: "us-east-1",
      endpoint: `${h.url}/v1/llm/cloud-a/us-east-1`,
      token: { token: h.projectToken },
      authSchemePreference: ["httpBearerAuth"],
      requestHandler: new NodeHttpHandler() as never,
    });
    const out = await client.send(
      new ConverseStreamCommand({ modelId: SONNET, messages: [{ role: "user", content: [{ text: "hi" }] }] }),
    );
    let text = "";
    let reported = 0;
    for await (const event of out.stream ?? []) {
      if (event.contentBlockDelta?.delta?.text) text += event.contentBlockDelta.delta.text;
      if (event.metadata?.usage) reported = event.metadata.usage.outputTokens ?? 0;
    }
    expect(text).toBe("Hello from upstream");
    expect(reported).toBe(USAGE.output);
    const embedding = await client.send(
      new InvokeModelCommand({
        modelId: "amazon.titan-embed-text-v2:0",
        contentType: "application/json",
        body: JSON.stringify({ inputText: "hello" }),
      }),
    );
    expect(JSON.parse(new TextDecoder().decode(embedding.body)).inputTextTokenCount).toBe(17);
    client.destroy();
  });

  it("Foundry SDK on cloud-b family-1 (SSE), x-api-key added", async () => {
    const client = new AnthropicFoundry({
      baseURL: `${h.url}/v1/llm/cloud-b/family-1/anthropic`,
      apiKey: "unused-by-the-gateway",
      defaultHeaders: { authorization: `Bearer ${h.projectToken}` },
    });
    const chunks: string[] = [];
    const stream = client.messages.stream({
      model: "claude-sonnet-4-5",
      max_tokens: 50,
      messages: [{ role: "user", content: "hi" }],
    });
    stream.on("text", (t) => chunks.push(t));
    const final = await stream.finalMessage();
    expect(chunks.join("")).toBe("Hello from upstream");
    expect(final.usage.output_tokens).toBe(USAGE.output);
    const seen = up.seen.at(-1);
    expect(seen?.path).toBe("/anthropic/v1/messages");
    expect(seen?.auth).toBe("x-api-key");
    expect(seen?.headers["x-api-key"]).toBe(CREDS.cloudBKey);
  });

  it("Anthropic SDK on cloud-a-alt family-1, the key sent as x-api-key", async () => {
    const client = new Anthropic({
      baseURL: `${h.url}/v1/llm/cloud-a-alt/family-1/us-east-1/anthropic`,
      apiKey: null,
      authToken: h.projectToken,
    });
    const message = await client.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 20,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.usage.input_tokens).toBe(USAGE.input);
    const seen = up.seen.at(-1);
    expect(seen?.headers["x-api-key"]).toBe(CREDS.bearer);
    expect(seen?.headers.authorization).toBeUndefined();
  });

  it("OpenAI SDK on cloud-b family-2: streamed chat gets include_usage added; embeddings; api-key header", async () => {
    const client = new OpenAI({ baseURL: `${h.url}/v1/llm/cloud-b/family-2/openai/v1`, apiKey: h.projectToken });
    const stream = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    let text = "";
    for await (const part of stream) text += part.choices[0]?.delta?.content ?? "";
    expect(text).toBe("Hello from upstream");
    const chat = up.seen.at(-1);
    expect(chat?.auth).toBe("api-key");
    expect(JSON.parse(chat?.body ?? "{}").stream_options).toEqual({ include_usage: true });
    const emb = await client.embeddings.create({ model: "text-embedding-3-small", input: "hello" });
    expect(emb.usage.prompt_tokens).toBe(9);
  });
});
