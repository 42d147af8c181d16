import { timingSafeEqual } from "node:crypto";
import type { Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { resolveApiToken } from "../../services/api-tokens.ts";
import { decideDeviceAuthorization, lookUpUserCode } from "../../services/device-auth.ts";
import { forwardedOrigin } from "../forwarded-origin.ts";
import { setPageHeaders } from "../installation/activate-html.ts";
import { decisionPage, devicePage, SIGN_IN_STEP, signInLink } from "./device-html.ts";
import { forgetCode, fromOwnPage, keepCode } from "./kept-code.ts";
import { pageSession } from "./page.ts";

function field(body: Record<string, unknown>, name: string, max: number): string {
  const value = body[name];
  return typeof value === "string" && value.length <= max ? value.trim() : "";
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The approval page's forms (`POST /device`). The person proves who they are with the browser
 * session (plus its CSRF token, which only a page of this origin can have read) or with an API
 * token pasted into the form, used for this decision only; or, signed out, asks to sign in first
 * (`step=sign-in`), which keeps the shown code across the sign-in when the page itself sent it.
 */
export function registerDeviceSubmit(app: ServiceApp, ctx: TenancyContext): void {
  app.post("/device", async (c) => {
    setPageHeaders(c);
    const origin = c.req.header("origin");
    const own = new Set([new URL(ctx.config.publicUrl).origin, forwardedOrigin(c.req.raw.headers)]);
    const site = c.req.header("sec-fetch-site");
    if ((origin && !own.has(origin)) || (site && site !== "same-origin" && site !== "none")) {
      return c.html(
        devicePage({ userCode: "", error: "This form is accepted only from this installation's own page." }),
        403,
      );
    }
    const body = (await c.req.parseBody()) as Record<string, unknown>;
    const userCode = field(body, "userCode", 32);
    const decision = field(body, "decision", 16);
    const pasted = field(body, "token", 512);
    const lookup = userCode ? await lookUpUserCode(ctx.db, userCode) : undefined;
    const again = (error: string, status: 400 | 401 | 403 | 409) =>
      c.html(devicePage({ userCode, lookup, error }), status);
    if (field(body, "step", 16) === SIGN_IN_STEP) {
      if (lookup?.state !== "pending") {
        return c.html(devicePage({ userCode, lookup }), userCode && lookup?.state === "unknown" ? 404 : 200);
      }
      // The page's own "Sign in to decide" (its code may have come in the address the device's
      // client opened, which alone keeps nothing): kept as a code typed here is, for the return.
      if (fromOwnPage(c)) keepCode(c, ctx, userCode, lookup.expiresAt);
      return c.redirect(signInLink(), 303);
    }
    if (decision !== "approve" && decision !== "deny") return again("Choose Approve or Deny.", 400);

    let approver: Principal | undefined;
    if (pasted) {
      approver = await resolveApiToken(ctx.db, pasted);
      if (!approver) return again("That API token is not valid (unknown, revoked or expired).", 401);
    } else {
      const session = await pageSession(c, ctx);
      if (!session) return again("Sign in first, or paste an API token.", 401);
      // A cross-site form cannot know the session's CSRF token, nor (SameSite=Lax) send its cookie.
      if (!origin || !same(field(body, "csrfToken", 128), session.csrfToken)) {
        return again("The form expired or did not come from this page: reload it and try again.", 403);
      }
      approver = session.principal;
    }
    const caller = { principal: approver, requestId: c.get("requestId") };
    let outcome: Awaited<ReturnType<typeof decideDeviceAuthorization>>;
    try {
      outcome = await decideDeviceAuthorization(ctx, caller, { userCode, approve: decision === "approve" });
    } catch (err) {
      // At the token limit the sign-in stays pending: the page says which limit, and the person
      // can revoke a token and approve again before the code expires.
      if (err instanceof ProblemError && err.slug === "limit-exceeded" && err.detail) return again(err.detail, 409);
      throw err;
    }
    // Decided (or no longer waiting): the code kept across a sign-in has served.
    forgetCode(c, ctx);
    const { html, status } = decisionPage(outcome);
    return c.html(html, status);
  });
}
