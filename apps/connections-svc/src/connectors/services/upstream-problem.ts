import { ProblemError } from "@agentplane/problem-details";
import type { FetchRefusedError } from "@agentplane/service-kit/outbound";

/**
 * The problem for an outbound call a tenant aimed (a connector's discovery or tool call) that got no
 * usable answer, the same at creation, re-discovery and call time: a URL the address policy refuses
 * is the tenant's to change (422); past that, the failure is on the far side, a 504 when it did not
 * answer in time and a 502 otherwise (refused, DNS, TLS, an HTTP error, a broken or oversized
 * answer). `reason` names the cause; `what` names the far side ("Connector billing").
 */
export function upstreamProblem(error: FetchRefusedError, what: string): ProblemError {
  const extensions = { reason: error.reason };
  if (error.reason === "blocked-address" || error.reason === "invalid-url") return error.toProblem(what);
  if (error.reason === "timeout") {
    return new ProblemError("gateway-timeout", {
      detail: `${what} did not answer in time: ${error.message}`,
      extensions,
    });
  }
  if (error.reason === "unreachable") {
    return new ProblemError("bad-gateway", { detail: `${what} could not be reached: ${error.message}`, extensions });
  }
  return new ProblemError("bad-gateway", { detail: `${what} gave no usable answer: ${error.message}`, extensions });
}
