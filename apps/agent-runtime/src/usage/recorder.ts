import { AsyncLocalStorage } from "node:async_hooks";
import type { RuntimeUsageSource } from "@agentplane/contracts/runtime";
import type { Logger } from "pino";
import type { ModelClient } from "../models/provider.ts";
import type { UsageStore } from "./store.ts";

/** What the model calls made inside `within` are recorded against. */
export interface UsageContext {
  source: RuntimeUsageSource;
  threadId?: string | undefined;
  runId?: string | undefined;
}

const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);

/**
 * Records every model call that returns, against the run it was made for: a turn (chat, team
 * chat, webhook, schedule, heartbeat), the compaction after it, the heartbeat's gate. The context
 * travels with the async call chain, so the turn loop, compaction and the tools need no usage
 * argument. A failed write is logged and never fails the call.
 */
export class UsageRecorder {
  readonly store: UsageStore;
  readonly #logger: Logger;
  readonly #context = new AsyncLocalStorage<UsageContext>();
  #warned = false;

  constructor(store: UsageStore, logger: Logger) {
    this.store = store;
    this.#logger = logger;
  }

  /** Runs `fn` with `context` over the current one (a run id set outside stays unless replaced). */
  within<T>(context: Partial<UsageContext>, fn: () => Promise<T>): Promise<T> {
    const outer = this.#context.getStore();
    const merged: UsageContext = { source: "other", ...outer };
    for (const [key, value] of Object.entries(context)) {
      if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
    }
    return this.#context.run(merged, fn);
  }

  /** The client whose answered calls are recorded. */
  model(client: ModelClient): ModelClient {
    return {
      provider: client.provider,
      endpoint: client.endpoint,
      ...(client.close ? { close: () => (client.close as () => Promise<void>).call(client) } : {}),
      createMessage: async (request, options) => {
        const message = await client.createMessage(request, options);
        const usage = message.usage as unknown as Record<string, unknown> | undefined;
        const context = this.#context.getStore() ?? { source: "other" };
        try {
          this.store.recordModelCall({
            ...context,
            provider: client.provider,
            model: request.model,
            inputTokens: count(usage?.input_tokens),
            outputTokens: count(usage?.output_tokens),
            cacheReadTokens: count(usage?.cache_read_input_tokens),
            cacheWriteTokens: count(usage?.cache_creation_input_tokens),
          });
        } catch (err) {
          if (!this.#warned)
            this.#logger.warn({ err: (err as Error).message }, "a model call's usage was not recorded");
          this.#warned = true;
        }
        return message;
      },
    };
  }
}
