// LLM tracing switched off (no TRACING_SECRET_KEY): kept apart from llm-tracing.ts so a runtime
// without tracing never loads Langfuse's SDK.
import type { LlmTracing } from "./llm-tracing.ts";

export const DISABLED_TRACING: LlmTracing = {
  enabled: false,
  run: (_kind, _meta, fn) => fn(),
  model: (client) => client,
  tools: (registry) => registry,
  embedder: (embedder) => embedder,
  shutdown: async () => {},
};
