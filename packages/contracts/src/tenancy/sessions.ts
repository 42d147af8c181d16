import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import { jsonBody, NoContent } from "./shared.ts";

/**
 * Browser sessions: the admin console's credential. The session id travels only in an HttpOnly
 * cookie; a mutating request must also carry the session's CSRF token in `X-CSRF-Token` and come
 * from the installation's own origin (the gateway checks both).
 */
export const SESSION_COOKIE = "agentplane_session";
/**
 * The session cookie's name where cookies are Secure (https). `__Host-` makes the browser refuse it
 * from any other host, so a page on a sibling subdomain (a sandbox's port behind the ingress, say)
 * cannot plant a session of its own choosing for the console: over https only this name counts.
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** Whether the session cookie is Secure (and `__Host-`): the request came over https, or the installation is published at https. */
export function secureSessionCookie(requestProtocol: string | undefined, publicUrl: string | undefined): boolean {
  return requestProtocol === "https" || (publicUrl?.startsWith("https:") ?? false);
}

/** The session cookie's name for a request (`secureSessionCookie`). */
export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/** The session cookie's value in a `Cookie` header: over https only the `__Host-` one counts. */
export function sessionCookieValue(cookieHeader: string | undefined | null, secure: boolean): string | undefined {
  if (!cookieHeader) return undefined;
  const names = secure ? [SECURE_SESSION_COOKIE] : [SECURE_SESSION_COOKIE, SESSION_COOKIE];
  for (const name of names) {
    for (const part of cookieHeader.split(";")) {
      const eq = part.indexOf("=");
      if (eq >= 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
    }
  }
  return undefined;
}

/** Whether one `name=value` part of a `Cookie` header is a session cookie (either name). */
export function isSessionCookiePart(part: string): boolean {
  const name = part.slice(0, Math.max(part.indexOf("="), 0)).trim();
  return name === SESSION_COOKIE || name === SECURE_SESSION_COOKIE;
}
export const CSRF_HEADER = "x-csrf-token";
/** Opaque session secret format: `aps_<id>_<secret>` (the id without its `ses_` prefix). */
export const SESSION_SECRET_PREFIX = "aps_";
/** Twelve hours: a working day, then sign in again. */
export const SESSION_TTL_SECONDS = 12 * 3600;

export const BrowserSession = z
  .object({
    id: z.string(),
    userId: z.string(),
    via: z
      .enum(["api_token", "oidc", "invitation", "session"])
      .describe("How the session was opened: with an API token, an OIDC token, an invitation, or from another session"),
    apiTokenId: z
      .string()
      .optional()
      .describe(
        "The API token the session was opened with; its restrictions apply and its revocation ends the session",
      ),
    userAgent: z.string().optional(),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    lastUsedAt: Timestamp.optional(),
    current: z.boolean().describe("True for the session the request came through"),
  })
  .openapi("BrowserSession");
export type BrowserSession = z.infer<typeof BrowserSession>;

export const OpenedSession = z
  .object({
    session: BrowserSession,
    csrfToken: z
      .string()
      .describe("Send it as `X-CSRF-Token` with every mutating request made with the session cookie"),
  })
  .openapi("OpenedSession");
export type OpenedSession = z.infer<typeof OpenedSession>;

export const BrowserSessionList = z.object({ items: z.array(BrowserSession) }).openapi("BrowserSessionList");

const SessionParams = z.object({ sessionId: pathParam("sessionId", "ses_01jc2x3y4z5a6b7c8d9e0f1g2h") });
const tags = ["Identity"];

export const createSessionRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "createSession",
    description:
      "Exchanges the presented credential (an API token or an OIDC token) for a browser session: the answer sets the HttpOnly session cookie and returns the CSRF token. The token itself is not kept by the browser. A session opened with a restricted token keeps its restrictions and ends when the token is revoked.",
    method: "post",
    path: "/v1/auth/sessions",
    tags,
    summary: "Sign in: open a browser session",
    responses: {
      201: jsonBody(OpenedSession, "Opened; the Set-Cookie header carries the session"),
      ...limitedCreateConflict("sessions"),
    },
  },
);

export const getCurrentSessionRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "getCurrentSession",
    description:
      "The browser session the request came through and its CSRF token; 404 when the request carried no session cookie.",
    method: "get",
    path: "/v1/auth/session",
    tags,
    summary: "The current browser session",
    responses: { 200: jsonBody(OpenedSession, "The session") },
  },
);

export const deleteCurrentSessionRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "deleteCurrentSession",
    description: "Sign out: revokes the session the request came through and clears its cookie.",
    method: "delete",
    path: "/v1/auth/session",
    tags,
    summary: "Sign out: revoke the current browser session",
    responses: { 204: NoContent },
  },
);

export const listSessionsRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "listSessions",
    description:
      "The caller's browser sessions that are neither revoked nor expired, newest first (at most 100). A token bound to an organization or project sees only the sessions opened with it.",
    method: "get",
    path: "/v1/auth/sessions",
    tags,
    summary: "The caller's open browser sessions",
    responses: { 200: jsonBody(BrowserSessionList, "Open sessions") },
  },
);

export const revokeSessionRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "revokeSession",
    description:
      "Revokes one of the caller's browser sessions (another user's, or for a bound token one not opened with it, answers 404).",
    method: "delete",
    path: "/v1/auth/sessions/{sessionId}",
    tags,
    summary: "Revoke a browser session",
    request: { params: SessionParams },
    responses: { 204: NoContent },
  },
);

export const sessionRoutes = [
  createSessionRoute,
  getCurrentSessionRoute,
  deleteCurrentSessionRoute,
  listSessionsRoute,
  revokeSessionRoute,
] as const;
