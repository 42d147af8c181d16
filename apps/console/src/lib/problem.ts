/** An RFC 9457 problem answered by the API, as the console shows it. */
export interface ProblemBody {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  requestId?: string;
  errors?: { pointer: string; message: string }[];
  ruleId?: string | null;
  [key: string]: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly problem: ProblemBody;

  constructor(status: number, problem: ProblemBody) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.problem = problem;
  }

  /** The slug at the end of the problem type (`policy-denied`, `validation-failed`...). */
  get slug(): string | undefined {
    return this.problem.type?.split("/").pop();
  }

  /** The policy rule that denied the request, for a 403 `policy-denied`. */
  get ruleId(): string | undefined {
    if (this.slug !== "policy-denied") return undefined;
    return typeof this.problem.ruleId === "string" ? this.problem.ruleId : undefined;
  }

  /**
   * The message the API gave for one field (`/body/name`), shown next to it; a field holding an
   * object (labels) also shows what was said of its members (`/body/labels/Team Name`).
   */
  fieldError(field: string): string | undefined {
    const names = [`/body/${field}`, `/${field}`];
    // The API words its schema checks for people ("Required", "At most 1000 characters").
    return this.problem.errors?.find((e) => names.some((n) => e.pointer === n || e.pointer.startsWith(`${n}/`)))
      ?.message;
  }
}

/** A form's field-error lookup from its mutation's error: the API's message for a field, if any. */
export function fieldErrorsOf(error: unknown): (field: string) => string | undefined {
  return (field) => (error instanceof ApiError ? error.fieldError(field) : undefined);
}

/** A one-line description of any error, for banners and toasts. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    const rule = err.ruleId ? ` (rule ${err.ruleId})` : "";
    return `${err.problem.detail ?? err.problem.title ?? `HTTP ${err.status}`}${rule}`;
  }
  if (err instanceof TypeError) return "The platform cannot be reached; check the connection and retry";
  return err instanceof Error ? err.message : String(err);
}

/** Reads a failed response as a problem (a proxy's HTML error page becomes a plain one). */
export async function problemOf(response: Response): Promise<ApiError> {
  let body: ProblemBody = { status: response.status, title: response.statusText };
  try {
    const text = await response.text();
    if (text.startsWith("{")) body = JSON.parse(text) as ProblemBody;
  } catch {
    // Keep the status line.
  }
  return new ApiError(response.status, body);
}
