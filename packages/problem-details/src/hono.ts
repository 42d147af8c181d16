import { type Hook, z } from "@hono/zod-openapi";
import type { Context, ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { $ZodIssue } from "zod/v4/core";
import { type FieldError, PROBLEM_CONTENT_TYPE, ProblemError } from "./problem-error.ts";
import { findUnsafeText } from "./strings.ts";

function requestIdOf(c: Context): string | undefined {
  return (c.get("requestId" as never) as string | undefined) ?? c.req.header("x-request-id") ?? undefined;
}

export function problemJson(c: Context, error: ProblemError): Response {
  const body = error.toBody({ instance: new URL(c.req.url).pathname, requestId: requestIdOf(c) });
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "content-type": PROBLEM_CONTENT_TYPE, ...error.headers },
  });
}

type Logger = { error: (obj: object, msg?: string) => void };

/** One error handler for every app: anything thrown becomes problem+json; unknown errors are 500 without a stack. */
export function createOnError(logger?: Logger): ErrorHandler {
  return (err, c) => {
    if (err instanceof ProblemError) return problemJson(c, err);
    if (err instanceof HTTPException) {
      const status = err.status;
      if (status === 413) return problemJson(c, new ProblemError("payload-too-large", { detail: err.message }));
      if (status === 415) {
        return problemJson(
          c,
          new ProblemError("unsupported-media-type", { detail: "The body must be sent as application/json" }),
        );
      }
      if (status === 400 && /json/i.test(err.message)) {
        return problemJson(c, new ProblemError("malformed-json", { detail: "The request body is not valid JSON" }));
      }
      return problemJson(
        c,
        new ProblemError(status >= 500 ? "internal-error" : "bad-request", { status, detail: err.message }),
      );
    }
    if (err instanceof SyntaxError && /JSON/.test(err.message)) {
      return problemJson(c, new ProblemError("malformed-json", { detail: "The request body is not valid JSON" }));
    }
    logger?.error({ err, requestId: requestIdOf(c) }, "unhandled error");
    return problemJson(c, new ProblemError("internal-error", { detail: "An unexpected error occurred" }));
  };
}

function issuePointer(target: string, path: readonly PropertyKey[]): string {
  const segments = path.map((p) => String(p).replaceAll("~", "~0").replaceAll("/", "~1"));
  return `/${[target, ...segments].join("/")}`;
}

const english = z.locales.en();

const plural = (n: number | bigint, unit: string) => `${n} ${unit}${Number(n) === 1 ? "" : "s"}`;

/**
 * A schema check's message in the words a person reads beside a field ("Required", "At most 1000
 * characters") rather than the validation library's ("Too big: expected string to have <=1000
 * characters"). Only the library's own wording is replaced: a message a schema words itself stays.
 */
function plainMessage(issue: $ZodIssue): string {
  // A record key that fails its own schema: say why the key is wrong, not only that it is.
  if (issue.code === "invalid_key" && issue.issues[0]) return plainMessage(issue.issues[0]);
  if (issue.message !== english.localeError(issue as never)) return issue.message;
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) return "Required";
  if (issue.code !== "too_small" && issue.code !== "too_big") return issue.message;
  const small = issue.code === "too_small";
  const bound = small ? issue.minimum : issue.maximum;
  const unit = issue.origin === "string" ? "character" : issue.origin === "array" ? "item" : undefined;
  if (unit) {
    if (small && unit === "character" && Number(bound) === 1 && !issue.exact) return "Required";
    if (issue.exact) return `Exactly ${plural(bound, unit)}`;
    return `${small ? "At least" : "At most"} ${plural(bound, unit)}`;
  }
  if (issue.origin !== "number" && issue.origin !== "int" && issue.origin !== "bigint") return issue.message;
  if (small) return issue.inclusive ? `${bound} or more` : `More than ${bound}`;
  return issue.inclusive ? `${bound} or less` : `Less than ${bound}`;
}

export function zodIssuesToFieldErrors(target: string, issues: readonly $ZodIssue[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        errors.push({ pointer: issuePointer(target, [...issue.path, key]), message: "Unknown field" });
      }
    } else {
      errors.push({ pointer: issuePointer(target, issue.path), message: plainMessage(issue) });
    }
  }
  return errors;
}

/**
 * The zod-openapi `defaultHook`: every validation failure becomes the same 400 shape. Valid input
 * is also refused when one of its strings holds text no store accepts (NUL, lone surrogates), so
 * every service's bodies, queries and parameters get that rule in one place.
 */
// biome-ignore lint/suspicious/noExplicitAny: the hook is generic over every route's env and schema
export const validationHook: Hook<any, any, any, any> = (result, c) => {
  const target = (result as { target?: string }).target ?? "body";
  const pointerTarget = target === "json" ? "body" : target;
  if (result.success) {
    if (target === "header" || target === "cookie") return;
    const unsafe = findUnsafeText((result as { data: unknown }).data);
    if (unsafe.length === 0) return;
    const errors = unsafe.map((u) => ({ pointer: issuePointer(pointerTarget, u.path), message: u.message }));
    return problemJson(c, new ProblemError("validation-failed", { detail: "The request is not valid", errors }));
  }
  const error = (result as { error: z.ZodError }).error;
  const errors = zodIssuesToFieldErrors(pointerTarget, error.issues);
  return problemJson(c, new ProblemError("validation-failed", { detail: "The request is not valid", errors }));
};

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "https://agentplane.dev/problems/not-found" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    requestId: z.string().optional(),
    errors: z.array(z.object({ pointer: z.string(), message: z.string() })).optional(),
  })
  .openapi("Problem");

function problemResponseSpec(description: string) {
  return { description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } } };
}

/** Shared error responses, spread into every route definition. */
export const errorResponses = {
  400: problemResponseSpec("The request is malformed or fails validation"),
  401: problemResponseSpec("No valid bearer token"),
  403: problemResponseSpec("The caller's role does not allow this"),
  404: problemResponseSpec("Not found (also for resources of another organization)"),
  409: problemResponseSpec("Conflicts with the current state"),
  413: problemResponseSpec("Body larger than 1 MiB"),
  429: problemResponseSpec("Rate limited"),
  500: problemResponseSpec("Unexpected error"),
} as const;

export { problemResponseSpec };
