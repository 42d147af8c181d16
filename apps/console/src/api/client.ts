import {
  type AgentplaneClient,
  createAgentplaneClient,
  type OperationId,
  ProblemError,
  type RequestParams,
  type ResponseOf,
} from "@agentplane/sdk";
import { ApiError } from "../lib/problem.ts";

/**
 * The console's only way to the platform: `/v1` through the SDK, over the browser session. The
 * cookie travels by itself (same origin); mutating requests add the session's CSRF token. A 401
 * means the session ended: the app goes to sign-in and comes back to the page afterwards.
 */
const CSRF_HEADER = "x-csrf-token";
const CSRF_KEY = "agentplane.csrf";
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

let csrfToken: string | undefined = sessionStorage.getItem(CSRF_KEY) ?? undefined;
let onUnauthorized: () => void = () => {};

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
  if (token) sessionStorage.setItem(CSRF_KEY, token);
  else sessionStorage.removeItem(CSRF_KEY);
}

export function onSessionEnded(handler: () => void): void {
  onUnauthorized = handler;
}

function client(token?: string): AgentplaneClient {
  return createAgentplaneClient({
    baseUrl: window.location.origin,
    credentials: "same-origin",
    ...(token ? { token } : {}),
    fetch: (request) => {
      if (!SAFE.has(request.method) && csrfToken && !request.headers.has("authorization")) {
        request.headers.set(CSRF_HEADER, csrfToken);
      }
      return fetch(request);
    },
  });
}

const session = client();

/**
 * Calls a `/v1` operation by its id. `token`: this request only carries a bearer token instead of
 * the session (sign-in). Failures become `ApiError` (the problem, its fields and rule id).
 */
export async function call<I extends OperationId>(
  id: I,
  params?: RequestParams<I>,
  options: { token?: string } = {},
): Promise<ResponseOf<I>> {
  try {
    return await (options.token ? client(options.token) : session).request(id, params);
  } catch (err) {
    if (err instanceof ProblemError) {
      if (err.status === 401 && !options.token) onUnauthorized();
      throw new ApiError(err.status, err.body);
    }
    throw err;
  }
}
