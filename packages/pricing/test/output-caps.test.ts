import { describe, expect, it } from "vitest";
import { BUNDLED_OUTPUT_CAPS, BUNDLED_PRICES, Pricing, parsePriceOverrides } from "../src/index.ts";

describe("output caps", () => {
  const pricing = new Pricing();

  it("knows the cap of every bundled chat model, under each provider's name for it", () => {
    for (const model of Object.keys(BUNDLED_PRICES)) {
      if (/embed/.test(model)) continue;
      expect(BUNDLED_OUTPUT_CAPS[model], model).toBeGreaterThan(0);
    }
    expect(pricing.outputCap("gpt-4o-2024-08-06")).toBe(16_384);
    expect(pricing.outputCap("us.anthropic.claude-opus-4-1-20250805-v1:0")).toBe(32_000);
    expect(pricing.outputCap("claude-3-haiku-20240307")).toBe(4_096);
    expect(pricing.outputCap("amazon.nova-micro-v1:0")).toBe(10_000);
  });

  it("assumes an unknown model produces as much as the largest of its family, or of the table", () => {
    expect(pricing.outputCap("gpt-9-turbo")).toBe(128_000);
    expect(pricing.outputCap("claude-next")).toBe(128_000);
    expect(pricing.outputCap("nova-ultra")).toBe(32_000);
    const largest = Math.max(...Object.values(BUNDLED_OUTPUT_CAPS));
    expect(pricing.outputCap("meta.llama3-8b-instruct-v1:0")).toBe(largest);
    expect(pricing.outputCap(undefined)).toBe(largest);
  });

  it("takes a cap from PRICE_TABLE_JSON for a model of the deployment's own", () => {
    const overrides = parsePriceOverrides(
      JSON.stringify({ "acme-tuned": { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, maxOutputTokens: 2048 } }),
    );
    const custom = new Pricing(overrides);
    expect(custom.outputCap("acme-tuned")).toBe(2048);
    expect(custom.outputCap("gpt-4o")).toBe(16_384);
    expect(() =>
      parsePriceOverrides(
        JSON.stringify({ x: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, maxOutputTokens: -1 } }),
      ),
    ).toThrow();
  });
});
