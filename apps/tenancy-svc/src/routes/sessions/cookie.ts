import { SESSION_TTL_SECONDS, secureSessionCookie, sessionCookieName } from "@agentplane/contracts";
import type { Context } from "hono";

/**
 * Whether cookies set on this answer are Secure: the caller reached the gateway over https (the
 * gateway names the scheme in `x-forwarded-proto`), or the installation is published at an https
 * address, where TLS often ends at a load balancer or ingress and the gateway itself sees http.
 */
export function secureCookies(c: Context, publicUrl: string | undefined): boolean {
  return secureSessionCookie(c.req.header("x-forwarded-proto"), publicUrl);
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site
 * subrequests), Secure as `secureCookies` says, for the whole origin; when Secure, named
 * `__Host-…`, so that no other host (a sibling subdomain) can set one the console would take.
 */
export function sessionCookie(
  c: Context,
  publicUrl: string | undefined,
  value: string,
  maxAgeSeconds = SESSION_TTL_SECONDS,
): string {
  const secure = secureCookies(c, publicUrl);
  const name = sessionCookieName(secure);
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

/** Tells the browser to drop the session cookie. */
export function clearedSessionCookie(c: Context, publicUrl: string | undefined): string {
  return sessionCookie(c, publicUrl, "", 0);
}
