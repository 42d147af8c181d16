import { PROBLEM_SLUGS, type ProblemSlug, problemType } from "./slugs.ts";

export interface FieldError {
  /** JSON Pointer (RFC 6901) into the request: `/body/name`, `/query/limit`. */
  pointer: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  requestId?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export interface ProblemOptions {
  detail?: string;
  title?: string;
  status?: number;
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Extra members of the problem object (RFC 9457 extensions). */
  extensions?: Record<string, unknown>;
  cause?: unknown;
}

/** The one error type handlers throw; `onError` turns it into `application/problem+json`. */
export class ProblemError extends Error {
  readonly slug: string;
  readonly status: number;
  readonly title: string;
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(slug: ProblemSlug | (string & {}), options: ProblemOptions = {}) {
    const known = (PROBLEM_SLUGS as Record<string, { status: number; title: string }>)[slug];
    super(options.detail ?? known?.title ?? slug, { cause: options.cause });
    this.name = "ProblemError";
    this.slug = slug;
    this.status = options.status ?? known?.status ?? 500;
    this.title = options.title ?? known?.title ?? "Error";
    this.detail = options.detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }

  toBody(extra: { instance?: string; requestId?: string } = {}): ProblemBody {
    return {
      ...this.extensions,
      type: problemType(this.slug),
      title: this.title,
      status: this.status,
      ...(this.detail !== undefined ? { detail: this.detail } : {}),
      ...(extra.instance ? { instance: extra.instance } : {}),
      ...(extra.requestId ? { requestId: extra.requestId } : {}),
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** Builds a problem+json Response (for code outside a Hono handler: gateway, proxies). */
export function problemResponse(error: ProblemError, extra: { instance?: string; requestId?: string } = {}): Response {
  return new Response(JSON.stringify(error.toBody(extra)), {
    status: error.status,
    headers: { "content-type": PROBLEM_CONTENT_TYPE, ...error.headers },
  });
}

export function notFound(what: string, id?: string): ProblemError {
  return new ProblemError("not-found", { detail: id ? `${what} ${id} was not found` : `${what} was not found` });
}

export function conflict(detail: string): ProblemError {
  return new ProblemError("conflict", { detail });
}

export function badRequest(detail: string, errors?: FieldError[]): ProblemError {
  return new ProblemError(errors ? "validation-failed" : "bad-request", { detail, ...(errors ? { errors } : {}) });
}

export function forbidden(detail = "Your role does not allow this action"): ProblemError {
  return new ProblemError("forbidden", { detail });
}
