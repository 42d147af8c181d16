// The LLM tracing interface, and tracing switched off (no TRACING_SECRET_KEY): kept apart from
// llm-tracing.ts so a runtime without tracing never loads Langfuse's SDK.
import type { Embedder } from "../memory/embeddings.ts";
import type { ModelClient } from "../models/provider.ts";
import type { ToolRegistry } from "../tools/types.ts";

/** The kinds of agent run, each its own trace. */
export type RunKind = "chat" | "webhook" | "heartbeat" | "schedule" | "compaction" | "team_chat";

export interface RunMeta {
  agentId?: string;
  threadId?: string;
  runId?: string;
}

export interface LlmTracing {
  readonly enabled: boolean;
  /** Runs `fn` as one agent run; a run inside another becomes a span of the outer run's trace. */
  run<T>(kind: RunKind, meta: RunMeta, fn: () => Promise<T>): Promise<T>;
  /** The model client whose calls become generations of the current run. */
  model(client: ModelClient): ModelClient;
  /** Makes the registry's calls tool observations of the current run. */
  tools(registry: ToolRegistry): ToolRegistry;
  embedder(embedder: Embedder | null): Embedder | null;
  /** Flushes queued spans, bounded by `timeoutMs`. */
  shutdown(timeoutMs?: number): Promise<void>;
}

export const DISABLED_TRACING: LlmTracing = {
  enabled: false,
  run: (_kind, _meta, fn) => fn(),
  model: (client) => client,
  tools: (registry) => registry,
  embedder: (embedder) => embedder,
  shutdown: async () => {},
};
