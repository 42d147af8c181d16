import { describe, expect, it } from "vitest";
import { Pricing } from "../src/index.ts";

const tokens = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0 };

describe("models whose name resolves to a cheaper entry", () => {
  const pricing = new Pricing();

  it("charges GPT-4o's first snapshot its own price, not the later alias's", () => {
    // gpt-4o-2024-05-13 lists at $5 / $15; the gpt-4o alias (2024-08-06 on) at $2.50 / $10.
    expect(pricing.charge("gpt-4o-2024-05-13", tokens)).toMatchObject({ known: true, costMicroUsd: 20_000_000 });
    expect(pricing.charge("gpt-4o-2024-08-06", tokens)).toMatchObject({ known: true, costMicroUsd: 12_500_000 });
  });

  it("charges GPT-4 its own input rate, above the fallback's", () => {
    // $30 / $60: the family's fallback (o1, $15 / $60) under-charged its input by half.
    for (const model of ["gpt-4", "gpt-4-0613"]) {
      expect(pricing.charge(model, tokens), model).toMatchObject({ known: true, costMicroUsd: 90_000_000 });
    }
  });

  it("never charges an unknown OpenAI model below a known one on either rate", () => {
    const unknown = pricing.quote("gpt-9").price;
    for (const model of ["gpt-4", "gpt-4o-2024-05-13", "o1", "gpt-5"]) {
      const known = pricing.quote(model).price;
      expect(unknown.input, model).toBeGreaterThanOrEqual(known.input);
      expect(unknown.output, model).toBeGreaterThanOrEqual(known.output);
    }
  });
});
