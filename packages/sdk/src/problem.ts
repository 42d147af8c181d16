import { readTextUpTo } from "./guard.ts";

/** What is read of an error's body at most: a problem is short, an endless one is cut here. */
const MAX_PROBLEM_BYTES = 64 * 1024;

/** A field-level error of a problem (RFC 9457 extension used by the platform). */
export interface FieldError {
  pointer: string;
  message: string;
}

/** The `application/problem+json` body the platform answers every error with. */
export interface ProblemBody {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  instance?: string;
  requestId?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/** Every non-2xx answer, as a typed error: problem+json fields, or what could be read of a plain body. */
export class ProblemError extends Error {
  readonly status: number;
  /** The problem type URI (`https://…/problems/not-found`), `about:blank` when the answer had none. */
  readonly type: string;
  /** The last segment of the type URI (`not-found`), the stable thing to branch on. */
  readonly slug: string;
  readonly title: string;
  readonly detail: string | undefined;
  readonly requestId: string | undefined;
  readonly errors: FieldError[];
  /** The problem object as received (extensions included). */
  readonly body: ProblemBody;
  readonly headers: Headers;

  constructor(status: number, body: ProblemBody, headers: Headers = new Headers()) {
    const title = body.title ?? `HTTP ${status}`;
    const detail = body.detail ?? (body.title === undefined ? providerMessage(body) : undefined);
    super(detail ? `${title}: ${detail}` : title);
    this.name = "ProblemError";
    this.status = body.status ?? status;
    this.type = body.type ?? "about:blank";
    this.slug = this.type === "about:blank" ? `http-${status}` : (this.type.split("/").pop() ?? this.type);
    this.title = title;
    this.detail = detail;
    this.requestId = body.requestId ?? headers.get("x-request-id") ?? undefined;
    this.errors = Array.isArray(body.errors) ? body.errors : [];
    this.body = body;
    this.headers = headers;
  }

  /** Reads a failed response into a ProblemError (the body is consumed). */
  static async fromResponse(response: Response): Promise<ProblemError> {
    const text = await readTextUpTo(response, MAX_PROBLEM_BYTES);
    let body: ProblemBody = {};
    try {
      const parsed: unknown = text ? JSON.parse(text) : {};
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as ProblemBody;
    } catch {
      // Not JSON (a proxy's HTML page): the text becomes the detail.
    }
    if (!body.title && !body.detail && text && !text.trimStart().startsWith("{")) {
      body = { title: response.statusText || `HTTP ${response.status}`, detail: text.slice(0, 500) };
    }
    return new ProblemError(response.status, body, response.headers);
  }
}

/**
 * What a model provider's own error body says, passed through `/v1/llm/**` as it came: Anthropic's
 * and OpenAI's `{"error":{"message"}}`, AWS's `{"message"}` or `{"Message"}`, a bare `{"error":"…"}`.
 */
function providerMessage(body: ProblemBody): string | undefined {
  const { error } = body;
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string") {
    return (error as { message: string }).message;
  }
  for (const key of ["message", "Message"]) if (typeof body[key] === "string") return body[key] as string;
  return undefined;
}

export function isProblemError(error: unknown): error is ProblemError {
  return error instanceof ProblemError;
}
