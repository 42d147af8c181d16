import { readFileSync } from "node:fs";
import { z } from "zod";
import { canonicalModel, FAMILIES, type ModelFamily, modelFamily } from "./families.ts";
import { OutputCaps } from "./output-caps.ts";

export { canonicalModel, type ModelFamily, modelFamily };

/** USD per million tokens. `input` is uncached input; cache reads and writes have their own rates. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The most output tokens a call can produce (PRICE_TABLE_JSON only; see `OutputCaps`). */
  maxOutputTokens?: number;
}
export type PriceTable = Record<string, ModelPrice>;

/*
 * Bundled list prices, keyed by the model's canonical name (see `canonicalModel`). Source for the
 * Claude entries: Anthropic's public pricing page, https://docs.anthropic.com/en/docs/about-claude/pricing
 * (model pricing table, read 2025-11), columns "Base Input Tokens", "Output Tokens", "Cache Hits &
 * Refreshes" (cacheRead) and "5m Cache Writes" (cacheWrite). Amazon Bedrock
 * (https://aws.amazon.com/bedrock/pricing/, Anthropic section, read 2025-11) and Microsoft Foundry
 * list the same on-demand rates for the same models, so their ids map onto these entries; regional
 * (non-global) Bedrock endpoints add a premium that a deployment sets through PRICE_TABLE_JSON.
 */
export const BUNDLED_PRICES: PriceTable = {
  // Claude Opus 4.5 — anthropic.com pricing page, 2025-11.
  "claude-opus-4-5": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  // Claude Opus 4.1 — anthropic.com pricing page, 2025-11.
  "claude-opus-4-1": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  // Claude Opus 4 — anthropic.com pricing page, 2025-11.
  "claude-opus-4": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  // Claude Sonnet 4.5 (prompts ≤ 200k tokens) — anthropic.com pricing page, 2025-11.
  "claude-sonnet-4-5": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  // Claude Sonnet 4 (prompts ≤ 200k tokens) — anthropic.com pricing page, 2025-11.
  "claude-sonnet-4": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  // Claude Sonnet 3.7 — anthropic.com pricing page, 2025-11.
  "claude-3-7-sonnet": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  // Claude Haiku 4.5 — anthropic.com pricing page, 2025-11.
  "claude-haiku-4-5": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  // Claude Haiku 3.5 — anthropic.com pricing page, 2025-11.
  "claude-3-5-haiku": { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  // Claude Haiku 3 — anthropic.com pricing page, 2025-11.
  "claude-3-haiku": { input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite: 0.3 },
  // Claude Opus 4.6 — anthropic.com pricing page, 2026-02 (same rates as Opus 4.5).
  "claude-opus-4-6": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  // Claude Sonnet 4.6 (prompts ≤ 200k tokens) — anthropic.com pricing page, 2026-02.
  "claude-sonnet-4-6": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  // Claude Sonnet 3.5 (retired, still named by older configurations) — anthropic.com, 2025-11.
  "claude-3-5-sonnet": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  // Claude Opus 3 (retired, still named by older configurations) — anthropic.com, 2025-11.
  "claude-3-opus": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  // Amazon Nova — https://aws.amazon.com/bedrock/pricing/ (Amazon section, on-demand, read
  // 2025-11); cached reads at a quarter of the input rate, cache writes at the input rate.
  "nova-premier": { input: 2.5, output: 12.5, cacheRead: 0.625, cacheWrite: 2.5 },
  "nova-pro": { input: 0.8, output: 3.2, cacheRead: 0.2, cacheWrite: 0.8 },
  "nova-lite": { input: 0.06, output: 0.24, cacheRead: 0.015, cacheWrite: 0.06 },
  "nova-micro": { input: 0.035, output: 0.14, cacheRead: 0.00875, cacheWrite: 0.035 },
  // Amazon Titan Text Embeddings — aws.amazon.com/bedrock/pricing, read 2025-11 (input only).
  // Exact ids: the version is part of the model here (v1 and v2 differ in price).
  "amazon.titan-embed-text-v2:0": { input: 0.02, output: 0, cacheRead: 0, cacheWrite: 0 },
  "amazon.titan-embed-text-v1": { input: 0.1, output: 0, cacheRead: 0, cacheWrite: 0 },
  // OpenAI models (also served as Azure deployments of the same name) —
  // https://openai.com/api/pricing/, read 2025-11; cached input at its own rate, writes as input.
  "gpt-5": { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 },
  "gpt-5-mini": { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0.25 },
  "gpt-4.1": { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0.4 },
  "gpt-4o": { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 2.5 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0.15 },
  o1: { input: 15, output: 60, cacheRead: 7.5, cacheWrite: 15 },
  // Snapshots and older models dearer than the name they resolve to (or than the family's
  // fallback), read from the same page's older models: GPT-4o's first snapshot is $5 / $15, not
  // the alias's $2.50 / $10; GPT-4 is $30 / $60. Neither caches input: cached reads at input rate.
  "gpt-4o-2024-05-13": { input: 5, output: 15, cacheRead: 5, cacheWrite: 5 },
  "gpt-4": { input: 30, output: 60, cacheRead: 30, cacheWrite: 30 },
  "gpt-4-0613": { input: 30, output: 60, cacheRead: 30, cacheWrite: 30 },
  // OpenAI embeddings (also served as Azure deployments of the same name) —
  // https://openai.com/api/pricing/, read 2025-11 (input only).
  "text-embedding-3-small": { input: 0.02, output: 0, cacheRead: 0, cacheWrite: 0 },
  "text-embedding-3-large": { input: 0.13, output: 0, cacheRead: 0, cacheWrite: 0 },
  "text-embedding-ada-002": { input: 0.1, output: 0, cacheRead: 0, cacheWrite: 0 },
};

/** What a model is charged: its own price, or (absent from the table) the fallback's, and why. */
export interface PriceQuote {
  price: ModelPrice;
  /** False when the model is not in the table and `price` is the fallback of `basis`. */
  known: boolean;
  /** The table entry whose price applies. */
  basis: string;
}

const PriceSchema = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cacheRead: z.number().nonnegative(),
  cacheWrite: z.number().nonnegative(),
  maxOutputTokens: z.number().int().positive().optional(),
});
const PriceTableSchema = z.record(z.string(), PriceSchema);

/** `PRICE_TABLE_JSON`: the JSON itself or a path to a file holding it; entries override the bundled ones. */
export function parsePriceOverrides(value: string | undefined): PriceTable {
  if (!value) return {};
  const text = value.trim().startsWith("{") ? value : readFileSync(value, "utf8");
  return PriceTableSchema.parse(JSON.parse(text));
}

/** The entry with the highest output rate (then input rate): the dearest a call to it can be. */
function dearest(entries: Iterable<[string, ModelPrice]>): [string, ModelPrice] | undefined {
  let best: [string, ModelPrice] | undefined;
  for (const entry of entries) {
    const [, p] = entry;
    if (!best || p.output > best[1].output || (p.output === best[1].output && p.input > best[1].input)) best = entry;
  }
  return best;
}

export class Pricing {
  private readonly table: Map<string, ModelPrice>;
  /** Per family, and overall (`*`): the dearest entry, what an unknown model is charged. */
  private readonly fallbacks = new Map<ModelFamily | "*", [string, ModelPrice]>();
  private readonly caps: OutputCaps;

  constructor(overrides: PriceTable = {}) {
    this.table = new Map();
    for (const [model, price] of Object.entries({ ...BUNDLED_PRICES, ...overrides })) {
      this.table.set(model, price);
    }
    const caps: Record<string, number> = {};
    for (const [model, price] of Object.entries(overrides)) {
      if (price.maxOutputTokens !== undefined) caps[model] = price.maxOutputTokens;
    }
    this.caps = new OutputCaps(caps);
    const entries = [...this.table];
    const overall = dearest(entries);
    if (overall) this.fallbacks.set("*", overall);
    for (const [, family] of FAMILIES) {
      const found = dearest(entries.filter(([model]) => modelFamily(model) === family));
      if (found) this.fallbacks.set(family, found);
    }
  }

  /** Names resolved through `canonicalModel` (four patterns) before: a call names the same few. */
  private readonly resolved = new Map<string, ModelPrice | null>();

  price(model: string): ModelPrice | undefined {
    const exact = this.table.get(model);
    if (exact) return exact;
    const known = this.resolved.get(model);
    if (known !== undefined) return known ?? undefined;
    const price = this.table.get(canonicalModel(model));
    if (this.resolved.size >= 1000) this.resolved.clear();
    this.resolved.set(model, price ?? null);
    return price;
  }

  /**
   * The price a call to `model` is charged. A model absent from the table is never free: it is
   * charged as the dearest model of its provider family (the dearest of the whole table when the
   * family is unknown), so spending limits bind it and usage never under-counts it
   * (docs/decisions/0012-unknown-model-prices.md).
   */
  quote(model: string | undefined): PriceQuote {
    const price = model ? this.price(model) : undefined;
    if (price && model) return { price, known: true, basis: model };
    const family = model ? modelFamily(model) : undefined;
    const [basis, fallback] = this.fallbacks.get(family ?? "*") ?? this.fallbacks.get("*") ?? ["none", ZERO];
    return { price: fallback, known: false, basis };
  }

  /**
   * The most output tokens a call to `model` can produce: what a call that names no output cap is
   * reserved for under a spending limit (an unknown model: the largest cap of its family).
   */
  outputCap(model: string | undefined): number {
    return this.caps.of(model);
  }

  /** Cost in micro-USD at the quoted price (see `quote`), with whether the model was in the table. */
  charge(
    model: string,
    tokens: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
  ): { costMicroUsd: number; known: boolean; basis: string } {
    const { price, known, basis } = this.quote(model);
    return { costMicroUsd: costAt(price, tokens), known, basis };
  }

  /** Cost in micro-USD of a model in the table; undefined for one that is not (see `charge`). */
  cost(
    model: string,
    tokens: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
  ): number | undefined {
    const p = this.price(model);
    return p ? costAt(p, tokens) : undefined;
  }
}

const ZERO: ModelPrice = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/**
 * A price per million tokens equals micro-USD per token, so the cost is the token counts times the
 * prices, rounded once at the end.
 */
function costAt(
  p: ModelPrice,
  tokens: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
): number {
  return Math.round(
    tokens.inputTokens * p.input +
      tokens.outputTokens * p.output +
      tokens.cacheReadTokens * p.cacheRead +
      tokens.cacheWriteTokens * p.cacheWrite,
  );
}
