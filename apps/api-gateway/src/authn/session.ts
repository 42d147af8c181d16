import { timingSafeEqual } from "node:crypto";
import { CSRF_HEADER, isSessionCookiePart, type ResolvedSession, sessionCookieValue } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { HeaderReader } from "../forward.ts";

/**
 * Browser sessions, the fourth credential: an HttpOnly cookie the console's pages send. The cookie
 * is accepted only where a browser cannot be made to send it on someone else's behalf:
 * - never cross-site: a request whose `Sec-Fetch-Site` or `Origin` names another site is refused;
 * - a mutating request must carry its `Origin` (browsers always do) equal to the installation's
 *   own, and the session's CSRF token in `X-CSRF-Token` (a synchronizer token: an HMAC of the
 *   session id that only tenancy can compute and only the console's own pages can read).
 * A request with a bearer token is authenticated by that token; the cookie is then ignored.
 */

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The session cookie's value, when the request carries one. `secure` (the request came over https,
 * or the installation is published at https): only the `__Host-` cookie counts, which no other host
 * can set.
 */
export function sessionSecretOf(headers: HeaderReader, secure: boolean): string | undefined {
  return sessionCookieValue(headers.get("cookie"), secure);
}

/** The `Cookie` header less the session cookie, either name (services never see the credential). */
export function withoutSessionCookie(cookie: string): string | undefined {
  const kept = cookie
    .split(";")
    .map((p) => p.trim())
    .filter((p) => p && !isSessionCookiePart(p));
  return kept.length ? kept.join("; ") : undefined;
}

/** Removes the session cookie from headers about to be forwarded to a service. */
export function stripSessionCookie(headers: Record<string, string | string[] | undefined>): void {
  const cookie = headers.cookie;
  if (typeof cookie !== "string") return;
  const kept = withoutSessionCookie(cookie);
  if (kept) headers.cookie = kept;
  else delete headers.cookie;
}

/** The origins the console is served from: the configured public URL's and the one the request reached. */
export function ownOrigins(requestOrigin: string, publicUrl: string | undefined): Set<string> {
  const origins = new Set([requestOrigin]);
  if (publicUrl) origins.add(new URL(publicUrl).origin);
  return origins;
}

function refused(detail: string): ProblemError {
  return new ProblemError("forbidden", { detail });
}

/** Refuses a session request from another origin (before the session is even looked up). */
export function checkSessionOrigin(headers: HeaderReader, method: string, origins: Set<string>): void {
  const site = headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") {
    throw refused("The session cookie is accepted only from the console's own origin");
  }
  const origin = headers.get("origin");
  if (origin && !origins.has(origin)) {
    throw refused("The session cookie is accepted only from the console's own origin");
  }
  if (!SAFE_METHODS.has(method) && !origin) {
    throw refused("A request made with the session cookie must name its Origin");
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A mutating request made with the session must carry the session's CSRF token. */
export function checkCsrf(headers: HeaderReader, method: string, session: ResolvedSession): void {
  if (SAFE_METHODS.has(method)) return;
  const presented = headers.get(CSRF_HEADER);
  if (!presented || !sameSecret(presented, session.csrfToken)) {
    throw refused(`A request made with the session cookie must carry the session's CSRF token in ${CSRF_HEADER}`);
  }
}

/** The principal of a request made with the session cookie, after the origin and CSRF checks. */
export async function authenticateSession(
  authenticator: { authenticateSession(secret: string): Promise<ResolvedSession> },
  secret: string,
  headers: HeaderReader,
  method: string,
  origins: Set<string>,
): Promise<ResolvedSession["principal"]> {
  checkSessionOrigin(headers, method, origins);
  const session = await authenticator.authenticateSession(secret);
  checkCsrf(headers, method, session);
  return session.principal;
}
