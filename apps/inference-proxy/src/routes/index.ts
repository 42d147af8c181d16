import type { ServiceApp } from "@agentplane/service-kit";
import type { InferenceContext } from "../context.ts";
import { registerListInferenceProviders } from "./providers/list.ts";

const REGISTRATIONS: ((app: ServiceApp, ctx: InferenceContext) => void)[] = [registerListInferenceProviders];

/**
 * Every Hono operation of the inference proxy, one file each. The `/v1/llm/**` pass-through is
 * not among them: `llmPassThroughFetch` (llm/pass-through.ts) dispatches it before the app.
 */
export function registerRoutes(app: ServiceApp, ctx: InferenceContext): void {
  for (const register of REGISTRATIONS) register(app, ctx);
}
