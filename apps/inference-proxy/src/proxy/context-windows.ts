import { canonicalModel, type ModelFamily, modelFamily } from "@agentplane/pricing";

/*
 * The most input tokens one sampling of each model reads (its context window), from the vendors'
 * model pages (read 2025-11 to 2026-02): Anthropic 200K for every Claude model served at the
 * standard rates (reading more needs the long-context beta, `context-1m-…`, which the proxy
 * refuses: decision 0048); OpenAI GPT-5 and GPT-5 mini 400K, GPT-4.1 and GPT-4.1 mini 1,047,576,
 * o1 200K, GPT-4o and GPT-4o mini 128K; Amazon Nova Premier 1M, Pro and Lite 300K, Micro 128K.
 * A call whose input the body does not show reserves this many input tokens, the provider's own
 * bound of what one sampling can read (docs/decisions/0053-input-the-body-does-not-show.md).
 */
const BUNDLED_CONTEXT_WINDOWS: ReadonlyMap<string, number> = new Map(
  Object.entries({
    "claude-opus-4-6": 200_000,
    "claude-sonnet-4-6": 200_000,
    "claude-opus-4-5": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-opus-4-1": 200_000,
    "claude-opus-4": 200_000,
    "claude-3-5-haiku": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-haiku": 200_000,
    "claude-3-opus": 200_000,
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    o1: 200_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "nova-premier": 1_000_000,
    "nova-pro": 300_000,
    "nova-lite": 300_000,
    "nova-micro": 128_000,
  }),
);

/**
 * A model absent from the table (a new one, a deployment's own name) is taken to read as much as
 * the largest window its family is known to offer, and one of no known family the largest of all:
 * like its price (decision 0012), a bound never smaller than what the call can read.
 */
const UNKNOWN: Readonly<Record<ModelFamily | "*", number>> = {
  anthropic: 1_000_000,
  openai: 1_047_576,
  amazon: 1_000_000,
  "*": 1_047_576,
};

/** The most input tokens one sampling of `model` can read. */
export function contextWindow(model: string | undefined): number {
  if (model === undefined) return UNKNOWN["*"];
  const known = BUNDLED_CONTEXT_WINDOWS.get(model) ?? BUNDLED_CONTEXT_WINDOWS.get(canonicalModel(model));
  if (known !== undefined) return known;
  return UNKNOWN[modelFamily(model) ?? "*"];
}
