import { readFileSync } from "node:fs";
import { z } from "zod";

/** USD per million tokens. `input` is uncached input; cache reads and writes have their own rates. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}
export type PriceTable = Record<string, ModelPrice>;

/*
 * Bundled list prices, keyed by the model's canonical name (see `canonicalModel`). Source for every
 * entry: Anthropic's public pricing page, https://docs.anthropic.com/en/docs/about-claude/pricing
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
};

/**
 * One name per model across providers: `claude-sonnet-4-5-20250929` (Anthropic API),
 * `us.anthropic.claude-sonnet-4-5-20250929-v1:0` (Bedrock inference profile),
 * `claude-sonnet-4-5@20250929` (Vertex) and `claude-sonnet-4-5` (Foundry, aliases) all become
 * `claude-sonnet-4-5`.
 */
export function canonicalModel(model: string): string {
  return model
    .toLowerCase()
    .replace(/^(?:[a-z]{2,6}\.)?anthropic\./, "")
    .replace(/-v\d+(?::\d+)?$/, "")
    .replace(/[@-]\d{8}$/, "")
    .replace(/-latest$/, "");
}

const PriceSchema = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cacheRead: z.number().nonnegative(),
  cacheWrite: z.number().nonnegative(),
});
const PriceTableSchema = z.record(z.string(), PriceSchema);

/** `PRICE_TABLE_JSON`: the JSON itself or a path to a file holding it; entries override the bundled ones. */
export function parsePriceOverrides(value: string | undefined): PriceTable {
  if (!value) return {};
  const text = value.trim().startsWith("{") ? value : readFileSync(value, "utf8");
  return PriceTableSchema.parse(JSON.parse(text));
}

export class Pricing {
  private readonly table: Map<string, ModelPrice>;

  constructor(overrides: PriceTable = {}) {
    this.table = new Map();
    for (const [model, price] of Object.entries({ ...BUNDLED_PRICES, ...overrides })) {
      this.table.set(model, price);
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
   * Cost in micro-USD. A price per million tokens equals micro-USD per token, so the cost is the
   * token counts times the prices, rounded once at the end.
   */
  cost(
    model: string,
    tokens: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
  ): number | undefined {
    const p = this.price(model);
    if (!p) return undefined;
    return Math.round(
      tokens.inputTokens * p.input +
        tokens.outputTokens * p.output +
        tokens.cacheReadTokens * p.cacheRead +
        tokens.cacheWriteTokens * p.cacheWrite,
    );
  }
}
