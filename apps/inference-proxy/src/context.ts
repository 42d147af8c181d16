import type { CallerResolver } from "./proxy/caller.ts";
import type { LlmProxy } from "./proxy/handler.ts";
import type { ProjectCredentials } from "./proxy/project-credentials.ts";

/** What every route handler gets. */
export interface InferenceContext {
  callers: CallerResolver;
  credentials: ProjectCredentials;
  /** The `/v1/llm/**` streaming pass-through (routes/llm/pass-through.ts dispatches to it). */
  llm: LlmProxy;
}
