import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { getInstallation } from "../../services/installation.ts";
import { ANOTHER_SITE, codeFromAnotherSite, form, layout, setPageHeaders } from "./activate-html.ts";

/** Holds the sealed OIDC sign-in state between `/activate` and `/activate/callback`. */
export const SIGN_IN_COOKIE = "agentplane_activation";

/**
 * The device flow's verification page (`GET /activate`), outside `/v1`; the gateway forwards it without
 * auth. The form posts to `POST /activate` (activate-submit.ts).
 */
export function registerActivatePage(app: ServiceApp, ctx: TenancyContext): void {
  const oidc = ctx.oidc !== undefined;

  app.get("/activate", async (c) => {
    const installation = await getInstallation(ctx);
    setPageHeaders(c);
    if (installation.status === "activated") {
      return c.html(layout("Already activated", "<p>This installation is already activated.</p>"), 200);
    }
    if (codeFromAnotherSite(c)) {
      return c.html(form("", { oidc, error: ANOTHER_SITE }), 200);
    }
    return c.html(form(c.req.query("code")?.slice(0, 32) ?? "", { oidc }), 200);
  });
}
