import { Pricing } from "@agentplane/pricing";
import { describe, expect, it } from "vitest";
import { PROVIDERS, RuntimeEnvSchema } from "../src/config.ts";
import { BUNDLED_CONTEXT_WINDOWS } from "../src/context/catalog.ts";

// Spending limits count what the price table charges: a default model missing from it ran free.
const pricing = new Pricing();

describe("every model the runtime calls by default is priced", () => {
  it("prices the default of every *_MODEL / *_MODEL_ID setting, for every provider", () => {
    const defaults = RuntimeEnvSchema.parse({});
    const models = Object.entries(defaults).filter(
      (e): e is [string, string] => /_MODEL(_ID)?$/.test(e[0]) && typeof e[1] === "string" && e[1] !== "",
    );
    // Main, classification and embeddings of both providers (heartbeat and cron use the main model).
    expect(models.map(([name]) => name)).toEqual(
      expect.arrayContaining(["CLOUD_A_MODEL_ID", "CLOUD_B_MODEL_ID", "CLOUD_B_CLASSIFICATION_MODEL_ID"]),
    );
    expect(PROVIDERS.length).toBeGreaterThan(0);
    const unpriced = models.filter(([, id]) => pricing.price(id) === undefined);
    expect(unpriced).toEqual([]);
    expect(pricing.price(defaults.CLOUD_B_MODEL_ID)).toMatchObject({ input: 3, output: 15 });
  });

  it("prices every model of the context-window catalog", () => {
    const unpriced = Object.keys(BUNDLED_CONTEXT_WINDOWS).filter((id) => pricing.price(id) === undefined);
    expect(unpriced).toEqual([]);
  });

  it("charges an unknown model as the dearest of its family, never at zero", () => {
    const tokens = { inputTokens: 1000, outputTokens: 1000, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const claude = pricing.charge("claude-future-9", tokens);
    expect(claude).toMatchObject({ known: false, basis: "claude-opus-4-1" });
    expect(claude.costMicroUsd).toBe(1000 * 15 + 1000 * 75);
    expect(pricing.charge("us.amazon.nova-ultra-v1:0", tokens)).toMatchObject({ known: false, basis: "nova-premier" });
    expect(pricing.charge("gpt-9", tokens).costMicroUsd).toBeGreaterThan(0);
    expect(pricing.charge("mystery-model", tokens).costMicroUsd).toBe(1000 * 15 + 1000 * 75);
    expect(pricing.charge("claude-sonnet-4-6", tokens)).toMatchObject({ known: true, costMicroUsd: 18_000 });
  });
});
