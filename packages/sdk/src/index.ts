// The Agentplane SDK: the generated /v1 types and operation list, and the small hand-written layer
// every caller uses (auth, retries, ProblemError, pagination). Browser-safe: no Node-only imports.
export {
  type AgentplaneClient,
  type AgentplaneClientOptions,
  createAgentplaneClient,
  expandPath,
  type ItemOf,
  type ListOperationId,
  type OperationId,
  operationSpec,
  type RequestParams,
  type ResponseOf,
  type TokenSource,
} from "./client.ts";
export type { components, operations, paths } from "./generated/openapi.ts";
export { OPERATIONS } from "./generated/operations.ts";
export { RedirectRefusedError, RequestTimeoutError, ResponseTooLargeError } from "./guard.ts";
export type { OperationSpec, ParameterSpec } from "./operation-spec.ts";
export { type FieldError, isProblemError, type ProblemBody, ProblemError } from "./problem.ts";
export { type RetryOptions, retryAfterMs, withRetries } from "./retry.ts";
