import type { ServiceApp } from "@agentplane/service-kit";
import { deleteCookie, getCookie } from "hono/cookie";
import type { TenancyContext } from "../../context.ts";
import { approveActivation } from "../../services/installation.ts";
import { SignInError } from "../../services/oidc-activation.ts";
import { escapeHtml, layout, outcomePage, setPageHeaders } from "./activate-html.ts";
import { SIGN_IN_COOKIE } from "./activate-page.ts";

function failed(message: string): string {
  return layout(
    "Sign-in failed",
    `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/activate">Start again</a></p>`,
  );
}

/**
 * `GET /activate/callback`: where the identity provider sends the operator back. A verified sign-in
 * approves the pending activation with the codes the operator entered (carried sealed), with the
 * signed-in identity as the first owner.
 */
export function registerActivateCallback(app: ServiceApp, ctx: TenancyContext): void {
  app.get("/activate/callback", async (c) => {
    setPageHeaders(c);
    if (!ctx.oidc) return c.html(failed("Sign-in is not configured here."), 404);
    const cookie = getCookie(c, SIGN_IN_COOKIE);
    // One sign-in, one callback: the state cannot be replayed from this browser.
    deleteCookie(c, SIGN_IN_COOKIE, { path: "/activate" });
    const error = c.req.query("error");
    if (error) {
      return c.html(failed(`The identity provider did not sign you in (${error.slice(0, 100)}).`), 400);
    }
    let signedIn: Awaited<ReturnType<NonNullable<TenancyContext["oidc"]>["complete"]>>;
    try {
      signedIn = await ctx.oidc.complete({ cookie, params: new URL(c.req.url).searchParams });
    } catch (err) {
      if (!(err instanceof SignInError)) throw err;
      ctx.logger.warn({ reason: err.message }, "activation sign-in refused");
      return c.html(failed(err.message), err.status);
    }
    const outcome = await approveActivation(ctx, {
      userCode: signedIn.userCode,
      setupCode: signedIn.setupCode,
      orgName: signedIn.orgName,
      identity: signedIn.identity,
    });
    const { html, status } = outcomePage(outcome, signedIn.userCode, true);
    return c.html(html, status);
  });
}
