import { canonicalModel, type ModelFamily, modelFamily } from "./families.ts";

/*
 * The most output tokens a call to each model can produce, from the vendors' model pages (read
 * 2025-11 to 2026-02): Anthropic's model overviews (Opus 4.6 and Sonnet 4.6: 128K; Opus 4.5,
 * Sonnet 4.5, Sonnet 4, Sonnet 3.7 and Haiku 4.5: 64K; Opus 4.1 and Opus 4: 32K; Haiku 3.5 and
 * Sonnet 3.5: 8,192; Haiku 3 and Opus 3: 4,096), OpenAI's model pages (GPT-5 and GPT-5 mini:
 * 128,000; o1: 100,000; GPT-4.1 and GPT-4.1 mini: 32,768; GPT-4o and GPT-4o mini: 16,384) and the
 * Amazon Nova model cards (Premier: 32K; Pro, Lite and Micro: 10K). A spending limit reserves a
 * call's output cap before it is forwarded; a call that names none can produce this many.
 */
export const BUNDLED_OUTPUT_CAPS: Readonly<Record<string, number>> = {
  "claude-opus-4-6": 128_000,
  "claude-sonnet-4-6": 128_000,
  "claude-opus-4-5": 64_000,
  "claude-sonnet-4-5": 64_000,
  "claude-sonnet-4": 64_000,
  "claude-3-7-sonnet": 64_000,
  "claude-haiku-4-5": 64_000,
  "claude-opus-4-1": 32_000,
  "claude-opus-4": 32_000,
  "claude-3-5-haiku": 8_192,
  "claude-3-5-sonnet": 8_192,
  "claude-3-haiku": 4_096,
  "claude-3-opus": 4_096,
  "gpt-5": 128_000,
  "gpt-5-mini": 128_000,
  o1: 100_000,
  "gpt-4.1": 32_768,
  "gpt-4.1-mini": 32_768,
  "gpt-4o": 16_384,
  "gpt-4o-mini": 16_384,
  "gpt-4o-2024-05-13": 4_096,
  "gpt-4": 8_192,
  "gpt-4-0613": 8_192,
  "nova-premier": 32_000,
  "nova-pro": 10_000,
  "nova-lite": 10_000,
  "nova-micro": 10_000,
};

/**
 * Output caps by model (exact name first, then its canonical name). A model absent from the table
 * is assumed to produce as much as the largest cap of its provider family, or of the whole table
 * when its family is unknown: like its price (docs/decisions/0012-unknown-model-prices.md), its
 * reservation is never smaller than the call can cost.
 */
export class OutputCaps {
  private readonly caps: Map<string, number>;
  private readonly largest = new Map<ModelFamily | "*", number>();

  constructor(overrides: Readonly<Record<string, number>> = {}) {
    this.caps = new Map(Object.entries({ ...BUNDLED_OUTPUT_CAPS, ...overrides }));
    for (const [model, cap] of this.caps) {
      for (const key of [modelFamily(model), "*" as const]) {
        if (key !== undefined && cap > (this.largest.get(key) ?? 0)) this.largest.set(key, cap);
      }
    }
  }

  /** The most output tokens a call to `model` can produce (see the class). */
  of(model: string | undefined): number {
    if (model) {
      const cap = this.caps.get(model) ?? this.caps.get(canonicalModel(model));
      if (cap !== undefined) return cap;
      const family = modelFamily(model);
      const inFamily = family ? this.largest.get(family) : undefined;
      if (inFamily !== undefined) return inFamily;
    }
    return this.largest.get("*") ?? 0;
  }
}
