import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type RuntimeConfig } from "../src/config.ts";
import { createEmbedder } from "../src/memory/embeddings.ts";
import { createModelClient } from "../src/models/provider.ts";
import { checkProviderEnvironment } from "../src/runtime.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

async function callOnce(env: Record<string, string>) {
  const config = loadConfig(env);
  const client = createModelClient(config, { maxRetries: 0 });
  const before = fake.requests.length;
  const deltas: string[] = [];
  const message = await client.createMessage(
    { model: "m-1", max_tokens: 64, messages: [{ role: "user", content: "hello" }] },
    { onText: (d) => deltas.push(d) },
  );
  const request = fake.requests[before];
  if (!request) throw new Error("the fake model saw no request");
  return { message, request, deltas };
}

describe("cloud-a (Bedrock runtime)", () => {
  it("streams over the event-stream invoke path with the bearer key", async () => {
    const { message, request, deltas } = await callOnce({
      LLM_PROVIDER: "cloud-a",
      CLOUD_A_BEARER_TOKEN: "bedrock-key-1",
      CLOUD_A_ENDPOINT_URL: fake.url,
    });
    expect(request.path).toBe("/model/m-1/invoke-with-response-stream");
    expect(request.headers.authorization).toBe("Bearer bedrock-key-1");
    expect(typeof request.body.anthropic_version).toBe("string");
    expect(request.body.model).toBeUndefined();
    expect(deltas.join("")).toBe("echo: hello");
    expect(message.content).toEqual([{ type: "text", text: "echo: hello" }]);
  });

  it("signs with SigV4 when only access keys are set", async () => {
    const { request } = await callOnce({
      CLOUD_A_ACCESS_KEY_ID: "AKIDEXAMPLE",
      CLOUD_A_SECRET_ACCESS_KEY: "secret",
      CLOUD_A_REGION: "eu-west-1",
      CLOUD_A_ENDPOINT_URL: fake.url,
    });
    expect(request.path).toBe("/model/m-1/invoke-with-response-stream");
    expect(request.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/,
    );
    expect(request.headers["x-amz-date"]).toMatch(/^\d{8}T\d{6}Z$/);
    expect(request.headers["x-api-key"]).toBeUndefined();
  });

  it("an unknown LLM_PROVIDER stops the start, naming the variable and the allowed values", () => {
    expect(() => loadConfig({ LLM_PROVIDER: "something-else", CLOUD_A_BEARER_TOKEN: "k" })).toThrow(
      /LLM_PROVIDER.*cloud-a.*cloud-a-alt.*cloud-b/,
    );
  });
});

describe("cloud-a-alt (second endpoint)", () => {
  it("calls the Messages API with x-api-key and SSE", async () => {
    const { request, message } = await callOnce({
      LLM_PROVIDER: "cloud-a-alt",
      CLOUD_A_BEARER_TOKEN: "alt-key",
      CLOUD_A_MODEL_ID: "anthropic.claude-sonnet-4-5",
      CLOUD_A_CLASSIFICATION_MODEL_ID: "anthropic.claude-haiku-4-5",
      CLOUD_A_ALT_BASE_URL: `${fake.url}/anthropic`,
    });
    expect(request.path).toBe("/anthropic/v1/messages");
    expect(request.headers["x-api-key"]).toBe("alt-key");
    expect(request.headers.authorization).toBeUndefined();
    expect(request.body.stream).toBe(true);
    expect(message.content[0]).toEqual({ type: "text", text: "echo: hello" });
  });
});

describe("cloud-b (Foundry)", () => {
  it("posts to /anthropic/v1/messages with the resource key, placeholders sent as is", async () => {
    const { request } = await callOnce({
      LLM_PROVIDER: "cloud-b",
      CLOUD_B_API_KEY: "__managed_cred:6f1c2d3e-0000-4000-8000-000000000000__",
      CLOUD_B_BASE_URL: `${fake.url}/anthropic/v1`,
    });
    expect(request.path).toBe("/anthropic/v1/messages");
    expect(request.headers["x-api-key"]).toBe("__managed_cred:6f1c2d3e-0000-4000-8000-000000000000__");
    expect(request.headers.authorization).toBeUndefined();
    expect(request.body.model).toBe("m-1");
  });
});

describe("gateway mode", () => {
  const base = () => ({ GATEWAY_API_URL: `${fake.url}/`, GATEWAY_API_TOKEN: "apl_tok_secret" });

  it("cloud-a goes to /v1/llm/cloud-a/{region}/model/... with the gateway bearer", async () => {
    const { request } = await callOnce({ ...base(), CLOUD_A_REGION: "us-west-2" });
    expect(request.path).toBe("/v1/llm/cloud-a/us-west-2/model/m-1/invoke-with-response-stream");
    expect(request.headers.authorization).toBe("Bearer apl_tok_secret");
  });

  it("cloud-a-alt goes to /v1/llm/cloud-a-alt/family-1/{region}/anthropic/v1/messages", async () => {
    const { request } = await callOnce({
      ...base(),
      LLM_PROVIDER: "cloud-a-alt",
      CLOUD_A_MODEL_ID: "anthropic.claude-sonnet-4-5",
      CLOUD_A_CLASSIFICATION_MODEL_ID: "anthropic.claude-haiku-4-5",
    });
    expect(request.path).toBe("/v1/llm/cloud-a-alt/family-1/us-east-1/anthropic/v1/messages");
    expect(request.headers.authorization).toBe("Bearer apl_tok_secret");
    expect(request.headers["x-api-key"]).toBeUndefined();
  });

  it("cloud-b goes to /v1/llm/cloud-b/family-1/anthropic/v1/messages with no local credential", async () => {
    const { request } = await callOnce({ ...base(), LLM_PROVIDER: "cloud-b" });
    expect(request.path).toBe("/v1/llm/cloud-b/family-1/anthropic/v1/messages");
    expect(request.headers.authorization).toBe("Bearer apl_tok_secret");
  });
});

describe("tool calls on the wire", () => {
  it("decodes a streamed tool_use block through the Bedrock event stream", async () => {
    const saved = fake.respond;
    fake.respond = () => ({
      content: [{ type: "tool_use", id: "toolu_1", name: "update_settings", input: { verbose: true } }],
    });
    try {
      const { message } = await callOnce({ CLOUD_A_BEARER_TOKEN: "k", CLOUD_A_ENDPOINT_URL: fake.url });
      expect(message.stop_reason).toBe("tool_use");
      expect(message.content[0]).toMatchObject({ type: "tool_use", name: "update_settings", input: { verbose: true } });
    } finally {
      fake.respond = saved;
    }
  });
});

describe("the process environment the provider SDKs read", () => {
  /** The first chat call and the first embedding with `vars` set in process.env, as the SDKs read it. */
  async function firstUse(config: RuntimeConfig, vars: Record<string, string>) {
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    Object.assign(process.env, vars);
    const outcome = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (err: Error) => err.message,
      );
    try {
      const chat = await outcome(
        createModelClient(config, { maxRetries: 0 }).createMessage({
          model: "m-1",
          max_tokens: 16,
          messages: [{ role: "user", content: "hello" }],
        }),
      );
      const embedder = createEmbedder(config);
      const embedding = embedder ? await outcome(embedder.embed(["a note"])) : "off";
      return { chat, embedding };
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }
  const refusal = (config: RuntimeConfig, vars: Record<string, string>) => {
    try {
      checkProviderEnvironment(config, vars);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };
  const cloudB = () => ({
    LLM_PROVIDER: "cloud-b",
    CLOUD_B_API_KEY: "k",
    CLOUD_B_BASE_URL: `${fake.url}/anthropic/v1`,
  });

  it("refuses at start exactly what the SDK clients refuse on first use", async () => {
    const cases: Array<{ env: Record<string, string>; vars: Record<string, string>; refused: string[] }> = [
      { env: cloudB(), vars: { ANTHROPIC_FOUNDRY_RESOURCE: "other" }, refused: ["ANTHROPIC_FOUNDRY_RESOURCE"] },
      { env: cloudB(), vars: { OPENAI_BASE_URL: "https://example.test/v1" }, refused: ["OPENAI_BASE_URL"] },
      {
        env: cloudB(),
        vars: { ANTHROPIC_FOUNDRY_RESOURCE: "other", OPENAI_BASE_URL: "https://example.test/v1" },
        refused: ["ANTHROPIC_FOUNDRY_RESOURCE", "OPENAI_BASE_URL"],
      },
      // Blank counts as unset, as the SDKs read it; these are never read next to what the runtime passes.
      {
        env: cloudB(),
        vars: {
          ANTHROPIC_FOUNDRY_RESOURCE: "  ",
          OPENAI_BASE_URL: "",
          AZURE_OPENAI_ENDPOINT: "https://other.openai.azure.com",
          ANTHROPIC_FOUNDRY_BASE_URL: "https://other.services.ai.azure.com/anthropic",
          OPENAI_API_VERSION: "2020-01-01",
        },
        refused: [],
      },
      {
        env: { ...cloudB(), CLOUD_B_EMBEDDING_MODEL_ID: "" },
        vars: { OPENAI_BASE_URL: "https://x.test" },
        refused: [],
      },
      {
        env: { LLM_PROVIDER: "cloud-b", GATEWAY_API_URL: fake.url, GATEWAY_API_TOKEN: "t" },
        vars: {
          ANTHROPIC_FOUNDRY_RESOURCE: "other",
          OPENAI_BASE_URL: "https://x.test",
          AZURE_OPENAI_ENDPOINT: "https://y.test",
        },
        refused: [],
      },
      {
        env: { CLOUD_A_BEARER_TOKEN: "k", CLOUD_A_ENDPOINT_URL: fake.url },
        vars: {
          AWS_REGION: "eu-west-1",
          ANTHROPIC_BEDROCK_BASE_URL: "https://x.test",
          AWS_BEARER_TOKEN_BEDROCK: "other",
          ANTHROPIC_FOUNDRY_RESOURCE: "other",
          OPENAI_BASE_URL: "https://x.test",
        },
        refused: [],
      },
      {
        env: {
          LLM_PROVIDER: "cloud-a-alt",
          CLOUD_A_BEARER_TOKEN: "k",
          CLOUD_A_MODEL_ID: "m",
          CLOUD_A_CLASSIFICATION_MODEL_ID: "h",
          CLOUD_A_ALT_BASE_URL: `${fake.url}/anthropic`,
          CLOUD_A_ENDPOINT_URL: fake.url,
        },
        vars: { ANTHROPIC_BASE_URL: "https://x.test", ANTHROPIC_API_KEY: "a", ANTHROPIC_AUTH_TOKEN: "b" },
        refused: [],
      },
    ];
    for (const { env, vars, refused } of cases) {
      const config = loadConfig(env);
      const used = await firstUse(config, vars);
      const message = refusal(config, vars);
      const label = JSON.stringify({ env: env.LLM_PROVIDER ?? "cloud-a", vars, used });
      // The SDKs' own refusals, each on its first use.
      expect(used.chat === "ok", label).toBe(!refused.includes("ANTHROPIC_FOUNDRY_RESOURCE"));
      if (refused.includes("ANTHROPIC_FOUNDRY_RESOURCE"))
        expect(used.chat).toBe("baseURL and resource are mutually exclusive");
      expect(used.embedding === "ok" || used.embedding === "off", label).toBe(!refused.includes("OPENAI_BASE_URL"));
      if (refused.includes("OPENAI_BASE_URL"))
        expect(used.embedding).toBe("baseURL and endpoint are mutually exclusive");
      // The start check names the same variables, and says what to do.
      if (refused.length === 0) expect(message, label).toBeUndefined();
      else {
        expect(message, label).toMatch(new RegExp(`^${refused[0]}: is set in the process environment`));
        for (const variable of refused) expect(message).toContain(`${variable}: is set in the process environment`);
        expect(message).toContain("Unset it");
      }
    }
  });

  it("leaves a client passed in unchecked", () => {
    const config = loadConfig(cloudB());
    const vars = { ANTHROPIC_FOUNDRY_RESOURCE: "other", OPENAI_BASE_URL: "https://x.test" };
    expect(() => checkProviderEnvironment(config, vars, { embedder: null })).toThrow(
      /^ANTHROPIC_FOUNDRY_RESOURCE: [^;]*\(or the endpoint from CLOUD_B_BASE_URL\)$/,
    );
    const model = createModelClient(config);
    expect(() => checkProviderEnvironment(config, vars, { model })).toThrow(/^OPENAI_BASE_URL: /);
    expect(() => checkProviderEnvironment(config, vars, { model, embedder: null })).not.toThrow();
  });
});
