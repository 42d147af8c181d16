import type { ServiceApp } from "@agentplane/service-kit";
import type { InferenceContext } from "../../context.ts";
import { isLlmPath } from "../../proxy/target.ts";

/**
 * Every operation of `llmPassThroughRoutes` (`/v1/llm/**` and `/v1/projects/{projectId}/llm/**`).
 * Dispatch happens here, in the service's `fetch`, before the Hono app: an LLM path goes straight
 * to the streaming proxy (proxy/handler.ts), which checks the identity, caps the body (far above
 * the app's 1 MiB) and answers its own problems; any other path goes to the app's router. Keeping
 * the streams out of Hono keeps its middleware off the hot path.
 */
export function llmPassThroughFetch(
  app: ServiceApp,
  ctx: InferenceContext,
): (request: Request) => Response | Promise<Response> {
  return (request) => {
    const q = request.url.indexOf("?");
    const pathStart = request.url.indexOf("/", request.url.indexOf("//") + 2);
    const pathname = request.url.slice(pathStart, q < 0 ? undefined : q);
    return isLlmPath(pathname) ? ctx.llm(request) : app.fetch(request);
  };
}
