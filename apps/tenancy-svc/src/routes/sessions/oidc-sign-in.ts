import type { SignInErrorCode } from "@agentplane/contracts/sign-in-errors";
import { ProblemError } from "@agentplane/problem-details";
import type { ServiceApp } from "@agentplane/service-kit";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { TenancyContext } from "../../context.ts";
import { SignInError } from "../../services/oidc-activation.ts";
import { openSession, recordRefusedSignIn } from "../../services/sessions.ts";
import { resolveOidcUser, userPrincipal } from "../../services/users.ts";
import { forwardedOrigin } from "../forwarded-origin.ts";
import { secureCookies, sessionCookie } from "./cookie.ts";

/** The console's sign-in with the identity provider: `/sign-in/oidc` starts it, the provider returns to the callback. */
export const CONSOLE_SIGN_IN_PATH = "/sign-in/oidc";
export const CONSOLE_CALLBACK_PATH = "/sign-in/oidc/callback";
/** Holds the sealed state, nonce, PKCE verifier and return path between the two. */
const STATE_COOKIE = "agentplane_sign_in";
const COOKIE_CONTEXT = "oidc-console-sign-in";

/**
 * Where the state cookie lives. Over https it is `__Host-…` for the whole origin, as the session
 * cookie is: a page of a sibling host (a sandbox's exposed port under the same domain) can set a
 * cookie for the parent domain, and a state cookie it planted would let the callback sign the
 * browser in as whoever started that flow (the planter's own account). Over http (local use) it
 * stays on the callback's path.
 */
function stateCookie(c: Context, ctx: TenancyContext) {
  return secureCookies(c, ctx.config.publicUrl)
    ? ({ prefix: "host", path: "/" } as const)
    : ({ path: CONSOLE_CALLBACK_PATH } as const);
}

/**
 * Only a path of this installation: anything else (another host, `//host`, `/\\host`) returns to `/`.
 * Control characters are refused too: a browser drops tabs and newlines from a Location before
 * reading it, so `/<tab>/host` would become `//host`, another site.
 */
export function safeNext(next: string | undefined): string {
  if (!next?.startsWith("/") || next.startsWith("//") || next.length > 2000) return "/";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  return /[\\\u0000-\u001f\u007f]/.test(next) ? "/" : next;
}

function base(c: Context, ctx: TenancyContext): string {
  return (ctx.config.publicUrlFromRequest && forwardedOrigin(c.req.raw.headers)) || ctx.config.publicUrl;
}

/**
 * Back to the console's sign-in page with what went wrong (a code of SIGN_IN_ERRORS: the page
 * shows its own words, never text from its address), keeping where the person was going.
 */
function backToSignIn(c: Context, code: SignInErrorCode, next: string): Response {
  const query = new URLSearchParams({ error: code, ...(next !== "/" ? { next } : {}) });
  return c.redirect(`/sign-in?${query}`, 302);
}

/**
 * Console sign-in with the installation's identity provider (authorization code + PKCE, the same
 * `openid-client` flow as activation): the verified identity's user gets a browser session, the
 * same cookie an API token's sign-in sets, and the browser returns to `next`.
 */
export function registerConsoleOidcSignIn(app: ServiceApp, ctx: TenancyContext): void {
  app.get(CONSOLE_SIGN_IN_PATH, async (c) => {
    c.header("cache-control", "no-store");
    const next = safeNext(c.req.query("next"));
    if (!ctx.oidc) return backToSignIn(c, "not_configured", next);
    let begun: { location: string; cookie: string };
    try {
      begun = await ctx.oidc.beginSignIn({ next }, `${base(c, ctx)}${CONSOLE_CALLBACK_PATH}`, COOKIE_CONTEXT);
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, "console sign-in could not start");
      return backToSignIn(c, "provider_unreachable", next);
    }
    setCookie(c, STATE_COOKIE, begun.cookie, {
      ...stateCookie(c, ctx),
      httpOnly: true,
      sameSite: "Lax",
      maxAge: 600,
      secure: secureCookies(c, ctx.config.publicUrl),
    });
    return c.redirect(begun.location, 302);
  });

  app.get(CONSOLE_CALLBACK_PATH, async (c) => {
    c.header("cache-control", "no-store");
    if (!ctx.oidc) return backToSignIn(c, "not_configured", "/");
    const where = stateCookie(c, ctx);
    const cookie = "prefix" in where ? getCookie(c, STATE_COOKIE, where.prefix) : getCookie(c, STATE_COOKIE);
    // One sign-in, one callback: the state cannot be replayed from this browser.
    deleteCookie(c, STATE_COOKIE, { ...where, ...("prefix" in where ? { secure: true } : {}) });
    const record = { method: "oidc" as const, issuer: ctx.oidc.issuer, requestId: c.get("requestId") };
    const error = c.req.query("error");
    if (error) {
      // The provider's error code (an OAuth token such as `access_denied`), never its description.
      const code = /^[A-Za-z0-9_.-]{1,64}$/.test(error) ? error : "invalid";
      await recordRefusedSignIn(ctx, { ...record, reason: `The identity provider answered ${code}.` });
      return backToSignIn(c, "provider_refused", "/");
    }
    let done: Awaited<ReturnType<NonNullable<TenancyContext["oidc"]>["completeSignIn"]>>;
    try {
      done = await ctx.oidc.completeSignIn<{ next: string }>(
        cookie,
        new URL(c.req.url).searchParams,
        `${base(c, ctx)}${CONSOLE_CALLBACK_PATH}`,
        COOKIE_CONTEXT,
      );
    } catch (err) {
      if (!(err instanceof SignInError)) throw err;
      ctx.logger.warn({ reason: err.message }, "console sign-in refused");
      await recordRefusedSignIn(ctx, { ...record, reason: err.message });
      return backToSignIn(c, err.code, "/");
    }
    const user = await resolveOidcUser(ctx.db, done.identity);
    const signedIn = { principal: userPrincipal(user), requestId: record.requestId };
    let opened: Awaited<ReturnType<typeof openSession>>;
    try {
      opened = await openSession(ctx, signedIn, { userAgent: c.req.header("user-agent"), signIn: record });
    } catch (err) {
      // A person at the sessions limit reads why on the sign-in page, not as a JSON problem.
      if (err instanceof ProblemError && err.slug === "limit-exceeded" && err.detail) {
        await recordRefusedSignIn(ctx, { ...record, reason: err.detail });
        return backToSignIn(c, "sessions_limit", safeNext(done.carried.next as string | undefined));
      }
      throw err;
    }
    c.header("set-cookie", sessionCookie(c, ctx.config.publicUrl, opened.secret), { append: true });
    return c.redirect(safeNext(done.carried.next as string | undefined), 302);
  });
}
