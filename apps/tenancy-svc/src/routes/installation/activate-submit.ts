import type { ServiceApp } from "@agentplane/service-kit";
import { setCookie } from "hono/cookie";
import type { TenancyContext } from "../../context.ts";
import { approveActivation, checkActivationCodes } from "../../services/installation.ts";
import { secureCookies } from "../sessions/cookie.ts";
import { form, outcomePage, setPageHeaders } from "./activate-html.ts";
import { SIGN_IN_COOKIE } from "./activate-page.ts";

function field(body: Record<string, unknown>, name: string, max = 320): string | undefined {
  const value = body[name];
  return typeof value === "string" && value.length <= max ? value : undefined;
}

/**
 * The verification page's form (`POST /activate`): approves with the setup code, or, when an identity
 * provider is configured, checks the setup code and starts the sign-in that names the first owner.
 */
export function registerActivateSubmit(app: ServiceApp, ctx: TenancyContext): void {
  const oidc = ctx.oidc !== undefined;

  app.post("/activate", async (c) => {
    const body = (await c.req.parseBody()) as Record<string, unknown>;
    const userCode = field(body, "userCode", 32) ?? "";
    const setupCode = field(body, "setupCode", 64) ?? "";
    setPageHeaders(c);
    if (!userCode || !setupCode) return c.html(form(userCode, { error: "Both codes are required.", oidc }), 400);
    if (field(body, "method", 16) === "oidc") {
      if (!ctx.oidc) return c.html(form(userCode, { error: "Sign-in is not configured here." }), 400);
      // Anyone with an account at the provider can sign in: the setup code is what proves the
      // right to activate, checked (and counted when wrong) before the operator leaves the page.
      const refused = await checkActivationCodes(ctx, userCode, setupCode);
      if (refused) {
        const { html, status } = outcomePage(refused, userCode, oidc);
        return c.html(html, status);
      }
      let started: { location: string; cookie: string };
      try {
        started = await ctx.oidc.begin({
          userCode,
          setupCode,
          orgName: field(body, "orgName", 100)?.trim() || undefined,
        });
      } catch (err) {
        ctx.logger.warn({ err: (err as Error).message }, "OIDC sign-in could not start");
        return c.html(form(userCode, { error: "The identity provider cannot be reached.", oidc }), 502);
      }
      setCookie(c, SIGN_IN_COOKIE, started.cookie, {
        path: "/activate",
        httpOnly: true,
        // Lax: sent on the identity provider's top-level redirect back, not on cross-site subrequests.
        sameSite: "Lax",
        secure: secureCookies(c, ctx.config.publicUrl),
        maxAge: 600,
      });
      return c.redirect(started.location, 303);
    }
    const outcome = await approveActivation(ctx, {
      userCode,
      setupCode,
      orgName: field(body, "orgName", 100),
      ownerName: field(body, "ownerName", 100),
      email: field(body, "email"),
    });
    const { html, status } = outcomePage(outcome, userCode, oidc);
    return c.html(html, status);
  });
}
