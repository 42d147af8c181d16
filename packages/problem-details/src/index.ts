export {
  createOnError,
  errorResponses,
  ProblemSchema,
  problemJson,
  problemResponseSpec,
  validationHook,
  zodIssuesToFieldErrors,
} from "./hono.ts";
export {
  badRequest,
  conflict,
  type FieldError,
  forbidden,
  notFound,
  PROBLEM_CONTENT_TYPE,
  type ProblemBody,
  ProblemError,
  type ProblemOptions,
  problemResponse,
} from "./problem-error.ts";
export { DEFAULT_PROBLEM_BASE, PROBLEM_SLUGS, type ProblemSlug, problemType, setProblemBase } from "./slugs.ts";
export { findUnsafeText, unsafeTextReason } from "./strings.ts";
