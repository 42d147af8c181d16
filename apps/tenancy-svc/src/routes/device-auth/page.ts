import { type ResolvedSession, sessionCookieValue } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { Context } from "hono";
import type { TenancyContext } from "../../context.ts";
import { lookUpUserCode } from "../../services/device-auth.ts";
import { getInstallation } from "../../services/installation.ts";
import { resolveSession } from "../../services/sessions.ts";
import { layout, setPageHeaders } from "../installation/activate-html.ts";
import { secureCookies } from "../sessions/cookie.ts";
import { devicePage } from "./device-html.ts";

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
    const linked = c.req.query("code")?.trim().slice(0, 32) ?? "";
    // Followed from another site's link (a message, a web page), the code is not taken from the
    // address: its sender chose it, a flow of their own, and Approve would hand them the token in
    // one click. Typed in, opened by the device's client, or sent on from this page, it is.
    const site = c.req.header("sec-fetch-site");
    const fromElsewhere = linked !== "" && (site === "cross-site" || site === "same-site");
    if (fromElsewhere) {
      const notice =
        "This page was opened from another site. Type the code your device shows: a link cannot choose it.";
      return c.html(devicePage({ userCode: "", error: notice }), 200);
    }
    const userCode = linked;
    const lookup = userCode ? await lookUpUserCode(ctx.db, userCode) : undefined;
    const session = await pageSession(c, ctx);
    const html = devicePage({
      userCode,
      lookup,
      signedInAs: session ? (session.principal.displayName ?? session.principal.id) : undefined,
      csrfToken: session?.csrfToken,
    });
    return c.html(html, lookup && lookup.state === "unknown" ? 404 : 200);
  });
}
