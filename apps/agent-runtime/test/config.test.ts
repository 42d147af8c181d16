import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, configWarnings, LOCAL_OWNER_USER_ID, loadConfig, readEnvironment } from "../src/config.ts";

function failure(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected the configuration to be rejected");
}

describe("runtime configuration", () => {
  it("applies the spec defaults", () => {
    const { env, provider, port } = loadConfig({ CLOUD_A_BEARER_TOKEN: "k", AGENT_HOME: "/tmp/agent-home-x" });
    expect(provider).toBe("cloud-a");
    expect(port).toBe(3003);
    expect(env.AGENT_NAME).toBe("Prism");
    expect(env.TEAM_NAME).toBe("Local");
    expect(env.OWNER_USER_ID).toBe(LOCAL_OWNER_USER_ID);
    expect(env.CLOUD_A_REGION).toBe("us-east-1");
    expect(env.CLOUD_A_MODEL_ID).toMatch(/^us\./);
    expect(env.COMPACTION_THRESHOLD_PERCENT).toBe(90);
    expect(env.COMPACTION_TAIL_MESSAGES).toBe(6);
    expect(env.MEETING_TIMEOUT_MINUTES).toBe(60);
    expect(env.MEETING_ADMISSION_TIMEOUT_SECONDS).toBe(300);
    expect(env.TRACING_BASE_URL).toBe("http://localhost:3100");
    expect(env.CLOUD_B_EMBEDDING_MODEL_ID).toBe("text-embedding-3-small");
    expect(env.CONTEXT_WINDOW_TOKENS).toBeUndefined();
  });

  it("falls back on malformed meeting timeouts and ignores a non-positive context window", () => {
    const { env } = loadConfig({
      CLOUD_A_BEARER_TOKEN: "k",
      MEETING_TIMEOUT_MINUTES: "-5",
      CONTEXT_WINDOW_TOKENS: "abc",
      COMPACTION_THRESHOLD_PERCENT: "0",
    });
    expect(env.MEETING_TIMEOUT_MINUTES).toBe(60);
    expect(env.CONTEXT_WINDOW_TOKENS).toBeUndefined();
    expect(env.COMPACTION_THRESHOLD_PERCENT).toBe(0);
  });

  it("reads CHAT_ALLOW_BOTS as a boolean in any of its spellings, false when blank", () => {
    const allowBots = (value: string) =>
      loadConfig({ CLOUD_A_BEARER_TOKEN: "k", CHAT_ALLOW_BOTS: value }).env.CHAT_ALLOW_BOTS;
    expect([" Yes", "on", "1", "TRUE"].map(allowBots)).toEqual([true, true, true, true]);
    expect(["no", "OFF", "0", "false", ""].map(allowBots)).toEqual([false, false, false, false, false]);
  });

  it("holds idle connections 65 s unless HTTP_KEEP_ALIVE_TIMEOUT_MS says otherwise, within 1 s to 1 h", () => {
    expect(loadConfig({ CLOUD_A_BEARER_TOKEN: "k" }).keepAliveTimeoutMs).toBe(65_000);
    expect(loadConfig({ CLOUD_A_BEARER_TOKEN: "k", HTTP_KEEP_ALIVE_TIMEOUT_MS: "620000" }).keepAliveTimeoutMs).toBe(
      620_000,
    );
    for (const bad of ["0", "999", "abc", "3600001"]) {
      expect(failure({ CLOUD_A_BEARER_TOKEN: "k", HTTP_KEEP_ALIVE_TIMEOUT_MS: bad }).message).toContain(
        "HTTP_KEEP_ALIVE_TIMEOUT_MS",
      );
    }
  });

  it("reads CHAT_BOT_TURNS_MAX as a whole number, 3 when blank", () => {
    const max = (value: string) =>
      loadConfig({ CLOUD_A_BEARER_TOKEN: "k", CHAT_BOT_TURNS_MAX: value }).env.CHAT_BOT_TURNS_MAX;
    expect(["", " 0", "10"].map(max)).toEqual([3, 0, 10]);
  });

  it("reads CHAT_ALLOWED_CHANNELS as a list of channel ids, empty when blank", () => {
    const allowed = (value: string) =>
      loadConfig({ CLOUD_A_BEARER_TOKEN: "k", CHAT_ALLOWED_CHANNELS: value }).env.CHAT_ALLOWED_CHANNELS;
    expect(allowed("")).toEqual([]);
    expect(allowed(" C0OPS, G0PRIV ,")).toEqual(["C0OPS", "G0PRIV"]);
  });

  it("keeps an explicit empty embedding deployment (skip embeddings)", () => {
    const { env } = loadConfig({
      LLM_PROVIDER: "cloud-b",
      CLOUD_B_API_KEY: "k",
      CLOUD_B_RESOURCE_NAME: "r",
      CLOUD_B_EMBEDDING_MODEL_ID: "",
    });
    expect(env.CLOUD_B_EMBEDDING_MODEL_ID).toBe("");
  });

  it.each([
    [{}, "CLOUD_A_BEARER_TOKEN"],
    [{ LLM_PROVIDER: "nonsense" }, "LLM_PROVIDER"],
    [{ CLOUD_A_ACCESS_KEY_ID: "AKID" }, "CLOUD_A_SECRET_ACCESS_KEY"],
    [
      { LLM_PROVIDER: "cloud-a-alt", CLOUD_A_MODEL_ID: "anthropic.x", CLOUD_A_CLASSIFICATION_MODEL_ID: "anthropic.y" },
      "CLOUD_A_BEARER_TOKEN",
    ],
    [{ LLM_PROVIDER: "cloud-b", CLOUD_B_RESOURCE_NAME: "r" }, "CLOUD_B_API_KEY"],
    [{ LLM_PROVIDER: "cloud-b", CLOUD_B_API_KEY: "k" }, "CLOUD_B_RESOURCE_NAME"],
    [
      { LLM_PROVIDER: "cloud-b", CLOUD_B_API_KEY: "k", CLOUD_B_BASE_URL: "https://x.example/anthropic" },
      "CLOUD_B_BASE_URL",
    ],
    [{ GATEWAY_API_URL: "http://127.0.0.1:8080/v1" }, "GATEWAY_API_URL"],
    [{ GATEWAY_API_URL: "http://127.0.0.1:8080/v1/llm/" }, "GATEWAY_API_URL"],
    [{ LLM_PROVIDER: "cloud-a-alt", CLOUD_A_BEARER_TOKEN: "k" }, "CLOUD_A_MODEL_ID"],
    [
      { LLM_PROVIDER: "cloud-a-alt", CLOUD_A_BEARER_TOKEN: "k", CLOUD_A_MODEL_ID: "anthropic.claude-sonnet-4-5-v1:0" },
      "CLOUD_A_MODEL_ID",
    ],
    [
      { LLM_PROVIDER: "cloud-a-alt", CLOUD_A_BEARER_TOKEN: "k", CLOUD_A_MODEL_ID: "anthropic.claude-sonnet-4-5" },
      "CLOUD_A_CLASSIFICATION_MODEL_ID",
    ],
    [{ CLOUD_A_BEARER_TOKEN: "k", DATABASE_URL: "postgres://x/y" }, "DATABASE_URL"],
    [{ CLOUD_A_BEARER_TOKEN: "k", AGENT_ID: "not-a-uuid" }, "AGENT_ID"],
    [{ CLOUD_A_BEARER_TOKEN: "k", CHAT_ALLOW_BOTS: "ture" }, "CHAT_ALLOW_BOTS"],
    [{ CLOUD_A_BEARER_TOKEN: "k", CHAT_BOT_TURNS_MAX: "-1" }, "CHAT_BOT_TURNS_MAX"],
    [{ CLOUD_A_BEARER_TOKEN: "k", CHAT_ALLOWED_CHANNELS: "C0OPS,#general" }, "CHAT_ALLOWED_CHANNELS"],
    [{ CLOUD_A_BEARER_TOKEN: "k", CHAT_BOT_TURNS_MAX: "two" }, "CHAT_BOT_TURNS_MAX"],
  ])("rejects %o naming %s", (env, variable) => {
    const err = failure(env as Record<string, string>);
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(variable);
  });

  it("needs no model credential with a gateway", () => {
    for (const provider of ["cloud-a", "cloud-a-alt", "cloud-b"]) {
      const extra =
        provider === "cloud-a-alt"
          ? { CLOUD_A_MODEL_ID: "anthropic.a", CLOUD_A_CLASSIFICATION_MODEL_ID: "anthropic.b" }
          : {};
      expect(loadConfig({ LLM_PROVIDER: provider, GATEWAY_API_URL: "http://127.0.0.1:3000", ...extra }).provider).toBe(
        provider,
      );
    }
  });

  it("takes a gateway behind a path prefix, and says to drop /v1 from GATEWAY_API_URL", () => {
    expect(loadConfig({ GATEWAY_API_URL: "https://example.com/agentplane/" }).env.GATEWAY_API_URL).toBe(
      "https://example.com/agentplane/",
    );
    expect(failure({ GATEWAY_API_URL: "http://localhost:8080/v1" }).message).toContain(
      "without /v1 (the runtime adds /v1/llm/...), e.g. http://localhost:8080",
    );
  });

  it("reads the database path from a file: URL", () => {
    expect(loadConfig({ CLOUD_A_BEARER_TOKEN: "k", DATABASE_URL: "file:/data/agent.db" }).databasePath).toBe(
      "/data/agent.db",
    );
    expect(loadConfig({ CLOUD_A_BEARER_TOKEN: "k", DATABASE_URL: "file:./x.db" }).databasePath).toBe("./x.db");
  });

  it("reads <AGENT_HOME>/.env under the process environment", () => {
    const home = mkdtempSync(join(tmpdir(), "agent-home-"));
    writeFileSync(
      join(home, ".env"),
      "# comment\nexport AGENT_NAME=\"Nova\"\nTEAM_NAME=Ops # trailing\nPORT=4100\nOWNER_NAME='Ada L'\nEMPTY=\n",
    );
    const merged = readEnvironment({ AGENT_HOME: home, PORT: "4200" });
    expect(merged.AGENT_NAME).toBe("Nova");
    expect(merged.TEAM_NAME).toBe("Ops");
    expect(merged.PORT).toBe("4200");
    expect(merged.OWNER_NAME).toBe("Ada L");
    expect(merged.EMPTY).toBe("");
  });
});

describe("start warnings", () => {
  const env = { GATEWAY_API_URL: "http://127.0.0.1:8080" };
  it("warns of GATEWAY_API_URL without GATEWAY_API_TOKEN, unless the launcher provisions the token itself", () => {
    const config = loadConfig(env);
    expect(configWarnings(config).map((w) => w.variable)).toEqual(["GATEWAY_API_TOKEN"]);
    expect(configWarnings(config, { gatewayTokenPending: true })).toEqual([]);
  });
});
