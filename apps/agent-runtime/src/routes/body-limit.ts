import { ProblemError } from "@agentplane/problem-details";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";

/** The largest body an API route reads: far above any valid one (a message is at most 100,000 characters). */
export const MAX_API_BODY_BYTES = 1024 * 1024;

const tooLarge = () =>
  new ProblemError("payload-too-large", { detail: `The body is larger than ${MAX_API_BODY_BYTES / 1024 / 1024} MiB` });

/**
 * Bounds every API body before a route reads it whole: a declared length over the limit is
 * refused at once, a chunked body is counted as it streams and refused once past it. The webhook
 * receiver is left out: it reads its own body under the same bound, on the server's fast path.
 */
export function limitApiBodies(app: OpenAPIHono): void {
  const counted = bodyLimit({
    maxSize: MAX_API_BODY_BYTES,
    onError: () => {
      throw tooLarge();
    },
  });
  app.use("*", async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "OPTIONS") return next();
    if (method === "POST" && c.req.path.startsWith("/agents/webhooks/")) return next();
    const declared = c.req.header("content-length");
    if (declared !== undefined && c.req.header("transfer-encoding") === undefined) {
      if (Number(declared) > MAX_API_BODY_BYTES) throw tooLarge();
      return next();
    }
    return counted(c, next);
  });
}
