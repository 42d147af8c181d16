import { type ResolvedSession, sessionCookieValue } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { Context } from "hono";
import type { TenancyContext } from "../../context.ts";
import { lookUpUserCode } from "../../services/device-auth.ts";
import { getInstallation } from "../../services/installation.ts";
import { resolveSession } from "../../services/sessions.ts";
import { ANOTHER_SITE, codeFromAnotherSite, layout, setPageHeaders } from "../installation/activate-html.ts";
import { secureCookies } from "../sessions/cookie.ts";
import { devicePage } from "./device-html.ts";
import { forgetCode, fromOwnPage, keepCode, keptCode } from "./kept-code.ts";

/** The browser session the page was opened with (the gateway forwards its cookie to this page only). */
export async function pageSession(c: Context, ctx: TenancyContext): Promise<ResolvedSession | undefined> {
  const secret = sessionCookieValue(c.req.header("cookie"), secureCookies(c, ctx.config.publicUrl));
  return secret ? resolveSession(ctx, secret) : undefined;
}

/**
 * The sign-in device flow's approval page (`GET /device?code=…`), outside `/v1`: shows which client
 * asks and lets the signed-in person (browser session, or an API token pasted once) approve or deny
 * it. The form posts to `POST /device` (submit.ts).
 */
export function registerDevicePage(app: ServiceApp, ctx: TenancyContext): void {
  app.get("/device", async (c) => {
    setPageHeaders(c);
    if ((await getInstallation(ctx)).status !== "activated") {
      return c.html(
        layout(
          "Not activated",
          `<p>This installation is not activated yet: use <a href="/activate">/activate</a>.</p>`,
        ),
        409,
      );
    }
    // Followed from another site's link (a message, a web page), the code is not taken from the
    // address: its sender chose it, and Approve would hand them the token in one click.
    if (codeFromAnotherSite(c)) {
      return c.html(devicePage({ userCode: "", error: ANOTHER_SITE }), 200);
    }
    const typed = c.req.query("code")?.trim().slice(0, 32) ?? "";
    // Back from signing in (an address without a code), the code this person typed before it.
    const kept = typed ? undefined : keptCode(c, ctx);
    let userCode = typed || kept || "";
    const lookup = userCode ? await lookUpUserCode(ctx.db, userCode) : undefined;
    const session = await pageSession(c, ctx);
    if (kept && lookup?.state !== "pending") {
      forgetCode(c, ctx);
      userCode = "";
    }
    // Typed on this page by a person who has to sign in first: kept for their return.
    if (typed && !session && lookup?.state === "pending" && fromOwnPage(c)) {
      keepCode(c, ctx, typed, lookup.expiresAt);
    }
    const html = devicePage({
      userCode,
      lookup,
      signedInAs: session ? (session.principal.displayName ?? session.principal.id) : undefined,
      csrfToken: session?.csrfToken,
    });
    return c.html(html, userCode && lookup?.state === "unknown" ? 404 : 200);
  });
}
