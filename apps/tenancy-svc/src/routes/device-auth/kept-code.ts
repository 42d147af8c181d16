import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { TenancyContext } from "../../context.ts";
import { secureCookies } from "../sessions/cookie.ts";

/**
 * The code a signed-out person typed on `/device`, or asked to sign in for from it, kept across
 * their sign-in: the identity provider's redirects bring them back cross-site, and a code in that
 * address could have been anyone's. The cookie is set only by this page, answering a request from
 * its own origin (the form the person typed into, or its "Sign in to decide" form showing a code
 * the device's client opened it with), never from a link's or the address bar's address alone;
 * HttpOnly, and over https `__Host-…`, so neither a script nor a sibling host can plant one.
 */
const KEPT_CODE_COOKIE = "agentplane_device_code";
const CODE = /^[A-Za-z0-9-]{1,32}$/;

function where(c: Context, ctx: TenancyContext) {
  return secureCookies(c, ctx.config.publicUrl)
    ? ({ prefix: "host", path: "/", secure: true } as const)
    : ({ path: "/device" } as const);
}

/** Whether the request came from a page of this origin (not a link, not the address bar). */
export function fromOwnPage(c: Context): boolean {
  return c.req.header("sec-fetch-site") === "same-origin";
}

/** Keeps `userCode` until the code expires. */
export function keepCode(c: Context, ctx: TenancyContext, userCode: string, expiresAt: Date): void {
  if (!CODE.test(userCode)) return;
  const maxAge = Math.ceil((expiresAt.getTime() - Date.now()) / 1000);
  if (maxAge <= 0) return;
  setCookie(c, KEPT_CODE_COOKIE, userCode, { ...where(c, ctx), httpOnly: true, sameSite: "Lax", maxAge });
}

/** The code kept by `keepCode`, if any. */
export function keptCode(c: Context, ctx: TenancyContext): string | undefined {
  const w = where(c, ctx);
  const value = "prefix" in w ? getCookie(c, KEPT_CODE_COOKIE, w.prefix) : getCookie(c, KEPT_CODE_COOKIE);
  return value && CODE.test(value) ? value : undefined;
}

/** Drops the kept code (decided, or no longer waiting). */
export function forgetCode(c: Context, ctx: TenancyContext): void {
  deleteCookie(c, KEPT_CODE_COOKIE, where(c, ctx));
}
