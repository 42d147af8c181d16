import { SESSION_COOKIE, SESSION_TTL_SECONDS } from "@agentplane/contracts";
import type { Context } from "hono";

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site
 * subrequests), Secure when the caller reached the gateway over https (the gateway names the
 * scheme in `x-forwarded-proto`), for the whole origin.
 */
export function sessionCookie(c: Context, value: string, maxAgeSeconds = SESSION_TTL_SECONDS): string {
  const secure = c.req.header("x-forwarded-proto") === "https" ? "; Secure" : "";
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

/** Tells the browser to drop the session cookie. */
export function clearedSessionCookie(c: Context): string {
  return sessionCookie(c, "", 0);
}
