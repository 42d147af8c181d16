/** Catalog of problem types: slug → default title and status. The type URI is `{PROBLEM_BASE}/<slug>`. */
export const PROBLEM_SLUGS = {
  "bad-request": { status: 400, title: "Bad Request" },
  "validation-failed": { status: 400, title: "Validation Failed" },
  "malformed-json": { status: 400, title: "Malformed JSON" },
  unauthenticated: { status: 401, title: "Unauthenticated" },
  forbidden: { status: 403, title: "Forbidden" },
  "policy-denied": { status: 403, title: "Denied by Policy" },
  "not-found": { status: 404, title: "Not Found" },
  "method-not-allowed": { status: 405, title: "Method Not Allowed" },
  conflict: { status: 409, title: "Conflict" },
  "invalid-transition": { status: 409, title: "Invalid State Transition" },
  "limit-exceeded": { status: 409, title: "Limit Exceeded" },
  "upgrade-required": { status: 426, title: "Upgrade Required" },
  gone: { status: 410, title: "Gone" },
  "request-timeout": { status: 408, title: "Request Timeout" },
  "payload-too-large": { status: 413, title: "Payload Too Large" },
  "unsupported-media-type": { status: 415, title: "Unsupported Media Type" },
  "misdirected-request": { status: 421, title: "Misdirected Request" },
  unprocessable: { status: 422, title: "Unprocessable Content" },
  "rate-limited": { status: 429, title: "Too Many Requests" },
  "headers-too-large": { status: 431, title: "Request Header Fields Too Large" },
  "spending-limit-reached": { status: 429, title: "Spending Limit Reached" },
  "internal-error": { status: 500, title: "Internal Server Error" },
  "bad-gateway": { status: 502, title: "Bad Gateway" },
  "service-unavailable": { status: 503, title: "Service Unavailable" },
  "cluster-disconnected": { status: 503, title: "Cluster Disconnected" },
  "gateway-timeout": { status: 504, title: "Gateway Timeout" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemSlug = keyof typeof PROBLEM_SLUGS;

export const DEFAULT_PROBLEM_BASE = "https://agentplane.dev/problems";

let problemBase = DEFAULT_PROBLEM_BASE;

/** Set once at start from configuration (`PROBLEM_BASE`). */
export function setProblemBase(base: string): void {
  problemBase = base.replace(/\/+$/, "");
}

export function problemType(slug: string): string {
  return `${problemBase}/${slug}`;
}
