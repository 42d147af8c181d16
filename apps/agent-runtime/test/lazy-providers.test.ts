import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { createModelClient } from "../src/models/provider.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { fakeModelEnv, tempHome } from "./support/runtime.ts";

const PROBE = join(import.meta.dirname, "support", "sdk-load-probe.ts");
const MAIN = join(import.meta.dirname, "..", "src", "main.ts");

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

/**
 * Runs a Node process to its end; one still running after `stop.afterMs`, or once its output
 * shows `stop.on`, is sent SIGTERM.
 */
function run(
  args: string[],
  env: Record<string, string>,
  stop: { afterMs?: number; on?: string } = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const timer = setTimeout(() => child.kill("SIGTERM"), stop.afterMs ?? 20_000);
    child.on("close", () => clearTimeout(timer));
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += String(d);
      if (stop.on && out.includes(stop.on)) child.kill("SIGTERM");
    });
    child.stderr.on("data", (d) => {
      err += String(d);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

interface ProbeResult {
  afterStart: string[];
  afterWorkerCall: string[];
  afterEmbedding: string[];
  afterCreate: string[];
  afterDirectCall: string[];
  replies: unknown[];
}

describe("provider SDKs are loaded on first use", () => {
  it("a started runtime has loaded no provider SDK; the first call and embedding load theirs", async () => {
    const env = { ...fakeModelEnv(fake, tempHome()), LLM_PROVIDER: "cloud-b" };
    const embeddings = fake.embeddingRequests.length;
    const { code, out, err } = await run([PROBE, JSON.stringify(env)], {});
    expect(code, err).toBe(0);
    const result = JSON.parse(out) as ProbeResult;
    expect(result.afterStart).toEqual([]);
    // The worker thread made the call: the main thread still has none of them.
    expect(result.afterWorkerCall).toEqual([]);
    expect(result.replies).toEqual([[{ type: "text", text: "echo: hello" }], [{ type: "text", text: "echo: hello" }]]);
    // cloud-b embeds through the OpenAI SDK's Azure client, on the main thread.
    expect(fake.embeddingRequests.length).toBeGreaterThan(embeddings);
    expect(result.afterEmbedding).toEqual(["openai"]);
    expect(result.afterCreate).toEqual(["openai"]);
    expect(result.afterDirectCall).toEqual(expect.arrayContaining(["@anthropic-ai/foundry-sdk", "@anthropic-ai/sdk"]));
  });

  it("what the SDK would refuse of the options is refused when the client is created", () => {
    const config = loadConfig({
      LLM_PROVIDER: "cloud-a-alt",
      CLOUD_A_BEARER_TOKEN: "k",
      CLOUD_A_MODEL_ID: "m",
      CLOUD_A_CLASSIFICATION_MODEL_ID: "h",
    });
    expect(() => createModelClient(config, { maxRetries: -1 })).toThrow("maxRetries must be a positive integer");
    expect(() => createModelClient(config, { maxRetries: 1.5 })).toThrow("maxRetries must be an integer");
    expect(createModelClient(config).endpoint).toBe("https://bedrock-mantle.us-east-1.api.aws/anthropic");
  });

  it("a bad provider setup still stops the start, naming the variable", async () => {
    const home = tempHome();
    const missing = await run([MAIN], { AGENT_HOME: home, PORT: "0", LLM_PROVIDER: "cloud-b", CLOUD_B_API_KEY: "k" });
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(
      "invalid configuration: CLOUD_B_RESOURCE_NAME: is required for LLM_PROVIDER=cloud-b (or CLOUD_B_BASE_URL)",
    );
    const badUrl = await run([MAIN], { AGENT_HOME: home, PORT: "0", CLOUD_A_ENDPOINT_URL: "not a url" });
    expect(badUrl.code).toBe(2);
    expect(badUrl.err).toContain("invalid configuration: CLOUD_A_ENDPOINT_URL:");
  });

  it("what the provider SDKs would refuse of the process environment stops the start, naming it", async () => {
    const cloudB = {
      AGENT_HOME: tempHome(),
      PORT: "0",
      LOG_LEVEL: "silent",
      LLM_PROVIDER: "cloud-b",
      CLOUD_B_API_KEY: "k",
      CLOUD_B_RESOURCE_NAME: "res-1",
    };
    // Without the check the runtime starts (and only its first chat turn or embedding fails):
    // it is stopped after a few seconds, and the exit code says so.
    const foundry = await run([MAIN], { ...cloudB, ANTHROPIC_FOUNDRY_RESOURCE: "res-2" }, { afterMs: 8_000 });
    expect(foundry.code, foundry.err).toBe(2);
    expect(foundry.err).toContain(
      "agent-runtime: invalid configuration: ANTHROPIC_FOUNDRY_RESOURCE: is set in the process environment, where the cloud-b chat client would refuse it",
    );
    expect(foundry.err).toContain("Unset it: the runtime takes the resource from CLOUD_B_RESOURCE_NAME");
    const both = await run(
      [MAIN],
      { ...cloudB, ANTHROPIC_FOUNDRY_RESOURCE: "res-2", OPENAI_BASE_URL: "https://api.example.test/v1" },
      { afterMs: 8_000 },
    );
    expect(both.code, both.err).toBe(2);
    expect(both.err).toContain("invalid configuration: ANTHROPIC_FOUNDRY_RESOURCE: ");
    expect(both.err).toContain("; OPENAI_BASE_URL: is set in the process environment");
    expect(both.err).toContain("set CLOUD_B_EMBEDDING_MODEL_ID= to turn embeddings off");
  });

  it("an SDK variable that no client built at start would read does not stop it", async () => {
    const env = {
      ...fakeModelEnv(fake, tempHome()),
      PORT: "0",
      LOG_LEVEL: "info",
      // Embeddings off: the Azure client that would read OPENAI_BASE_URL is never built.
      CLOUD_B_EMBEDDING_MODEL_ID: "",
      OPENAI_BASE_URL: "https://api.example.test/v1",
      // Read by the Bedrock client only, which cloud-b does not build.
      AWS_BEARER_TOKEN_BEDROCK: "other",
    };
    const started = await run([MAIN], env, { on: "agent runtime listening" });
    // It got as far as listening (then was stopped by the signal, or closed on it).
    expect(started.out, started.err).toContain("agent runtime listening");
    expect(started.code).not.toBe(2);
    expect(started.err).not.toContain("invalid configuration");
  });
});
