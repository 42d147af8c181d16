import { HOP_BY_HOP_HEADERS } from "@agentplane/service-kit";

/**
 * Headers of an upstream's answer (a cluster relay's, an AWS endpoint's) that never reach the
 * caller. The upstream is the customer's (or, for AWS, holds what anyone with write access to a
 * bucket stored), but the answer is served from the platform's origin: nothing in it may act on
 * that origin in a browser (set or clear its cookies and storage, pin HSTS, name alternative
 * services, grant CORS, widen a service worker's scope, redirect by `refresh`, loosen the policy
 * below) or speak for the platform (its own `x-agentplane-` headers). See
 * docs/decisions/0027-cluster-proxy-answer-headers.md.
 */
const REFUSED_ANSWER_HEADERS = new Set([
  ...HOP_BY_HOP_HEADERS,
  "set-cookie",
  "set-cookie2",
  "clear-site-data",
  "strict-transport-security",
  "alt-svc",
  "service-worker-allowed",
  "refresh",
  "content-security-policy",
  "content-security-policy-report-only",
  "x-content-type-options",
]);

/**
 * Set on every such answer: a page from upstream renders, if at all, as a sandboxed document of an
 * opaque origin (no script, no access to the platform's cookies or storage), and is never sniffed
 * into something else than its declared type.
 */
export const ANSWER_POLICY = { "content-security-policy": "sandbox", "x-content-type-options": "nosniff" } as const;

/** Whether a header of an upstream's answer (its name in lower case) stays out of the caller's. */
export function refusedAnswerHeader(name: string): boolean {
  return REFUSED_ANSWER_HEADERS.has(name) || name.startsWith("access-control-") || name.startsWith("x-agentplane-");
}
