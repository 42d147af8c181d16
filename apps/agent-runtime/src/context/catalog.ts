import type { Logger } from "pino";

/**
 * Input-context windows (tokens) of the models the three providers serve, by base id: no
 * regional prefix, no vendor prefix, no version suffix. `cloud-a` ids such as
 * `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `cloud-a-alt` bare ids and `cloud-b`
 * deployment names left at their model id all reduce to these.
 */
export const BUNDLED_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  "claude-opus-4-6": 200_000,
  "claude-sonnet-4-6": 200_000,
  "claude-opus-4-5": 200_000,
  "claude-opus-4-5-20251101": 200_000,
  "claude-sonnet-4-5": 200_000,
  "claude-sonnet-4-5-20250929": 200_000,
  "claude-haiku-4-5": 200_000,
  "claude-haiku-4-5-20251001": 200_000,
  "claude-opus-4-1": 200_000,
  "claude-opus-4-1-20250805": 200_000,
  "claude-opus-4": 200_000,
  "claude-opus-4-20250514": 200_000,
  "claude-sonnet-4": 200_000,
  "claude-sonnet-4-20250514": 200_000,
  "claude-3-7-sonnet": 200_000,
  "claude-3-7-sonnet-20250219": 200_000,
  "claude-3-5-sonnet": 200_000,
  "claude-3-5-sonnet-20241022": 200_000,
  "claude-3-5-sonnet-20240620": 200_000,
  "claude-3-5-haiku": 200_000,
  "claude-3-5-haiku-20241022": 200_000,
  "claude-3-haiku": 200_000,
  "claude-3-haiku-20240307": 200_000,
  "claude-3-opus": 200_000,
  "claude-3-opus-20240229": 200_000,
  "nova-premier": 1_000_000,
  "nova-pro": 300_000,
  "nova-lite": 300_000,
  "nova-micro": 128_000,
};

const REGION = /^(us|eu|apac|ap|global|jp|au|ca|us-gov)\./;
const VENDOR = /^(anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen)\./;
const VERSION = /(-v\d+(:\d+)?|:\d+)$/;
const DATE = /-\d{8}$/;

/** `us.anthropic.claude-sonnet-4-5-20250929-v1:0` → `claude-sonnet-4-5-20250929`. */
export function baseModelId(modelId: string): string {
  return modelId.trim().toLowerCase().replace(/^.*\//, "").replace(REGION, "").replace(VENDOR, "").replace(VERSION, "");
}

/** A models.dev-format document: `{ <provider>: { models: { <id>: { limit: { context } } } } }`. */
type ModelsDev = Record<string, { models?: Record<string, { id?: string; limit?: { context?: unknown } }> }>;

export class ContextWindowCatalog {
  readonly #windows = new Map<string, number>();
  readonly #fallback: number | undefined;

  /** `fallback` is CONTEXT_WINDOW_TOKENS: used only for models the catalog does not know. */
  constructor(fallback?: number, entries: Readonly<Record<string, number>> = BUNDLED_CONTEXT_WINDOWS) {
    this.#fallback = fallback;
    for (const [id, window] of Object.entries(entries)) this.#windows.set(baseModelId(id), window);
  }

  /** The model's window in tokens; null when unknown (compaction off, usage indicator hidden). */
  windowOf(modelId: string): number | null {
    const base = baseModelId(modelId);
    return this.#windows.get(base) ?? this.#windows.get(base.replace(DATE, "")) ?? this.#fallback ?? null;
  }

  /** Adds every model of a models.dev-format document; returns how many windows it carried. */
  merge(document: unknown): number {
    if (typeof document !== "object" || document === null) throw new Error("not a models.dev document (an object)");
    let count = 0;
    for (const provider of Object.values(document as ModelsDev)) {
      for (const [key, model] of Object.entries(provider?.models ?? {})) {
        const context = model?.limit?.context;
        if (typeof context !== "number" || !Number.isInteger(context) || context <= 0) continue;
        this.#windows.set(baseModelId(model.id ?? key), context);
        count += 1;
      }
    }
    if (count === 0) throw new Error("the document lists no model with a context limit");
    return count;
  }

  /**
   * MODELS_DEV_URL: fetched once at start. A failure is logged and the bundled windows stay;
   * without a URL nothing goes out.
   */
  async refresh(url: string | undefined, logger: Logger, timeoutMs = 5000): Promise<void> {
    if (!url) return;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: "application/json" } });
      if (!res.ok) throw new Error(`status ${res.status}`);
      const count = this.merge(await res.json());
      logger.info({ url, models: count }, "context-window catalog refreshed");
    } catch (err) {
      logger.warn(
        { url, err: (err as Error).message },
        "context-window catalog refresh failed; the bundled catalog is used",
      );
    }
  }
}
