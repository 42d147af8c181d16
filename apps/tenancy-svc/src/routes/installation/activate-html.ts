import { createHash } from "node:crypto";
import { PAGE_SECURITY_HEADERS } from "@agentplane/contracts";
import type { Context } from "hono";
import type { ApprovalOutcome } from "../../services/installation.ts";

// The verification page's HTML, shared by `/activate` and its OIDC callback.

/** The pages' one style sheet, inline; the policy allows it by its hash and nothing else. */
const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1.2rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#b42318}.ok{color:#067647}
small{color:#555}`;

/**
 * The pages run no script and load nothing but the site's tab icon: a value that slipped past
 * escaping could not run or fetch anything either. Forms may post anywhere (`form-action` is left out): the identity
 * provider's sign-in is reached by a redirect from a form's answer, which the directive would block.
 */
export const APPROVAL_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
  "img-src 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The headers of every approval page (`/activate`, `/device` and their answers): never cached,
 * never inside another site's frame, where a person could be led to approve that site's code, and
 * with a policy that runs and loads nothing.
 */
export function setPageHeaders(c: Context): void {
  c.header("cache-control", "no-store");
  c.header("x-frame-options", "DENY");
  c.header("content-security-policy", APPROVAL_PAGE_CSP);
  for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS)) c.header(name, value);
}

/** What the pages say when they leave a link's code out (`codeFromAnotherSite`). */
export const ANOTHER_SITE =
  "This page was opened from another site. Type the code your device shows: a link cannot choose it.";

/**
 * Whether the page was followed from a link on another site (`Sec-Fetch-Site`) with a code in it:
 * such a code was chosen by whoever sent the link (a flow of their own, for the token an approval
 * would hand them), so the pages never fill it in; the person types the code their device shows.
 */
export function codeFromAnotherSite(c: Context): boolean {
  const site = c.req.header("sec-fetch-site");
  return (site === "cross-site" || site === "same-site") && Boolean(c.req.query("code"));
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Agentplane</title>
<style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/**
 * The approval form; with `oidc`, it also offers signing in at the identity provider, whose account
 * then becomes the first owner (the setup code is asked for either way).
 */
export function form(userCode: string, options: { error?: string | undefined; oidc?: boolean } = {}): string {
  const { error, oidc } = options;
  return layout(
    "Activate this installation",
    `${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ""}
<p>Enter the code shown by the device that started the activation, and ${
      oidc
        ? "the setup code printed when the platform first started; then approve, or sign in with your identity provider to make that account the owner"
        : "the setup code printed when the platform first started"
    }.</p>
<form method="post" action="/activate">
<label for="userCode">Activation code</label><input id="userCode" name="userCode" value="${escapeHtml(userCode)}" required autocomplete="off">
<label for="setupCode">Setup code</label><input id="setupCode" name="setupCode" required autocomplete="off">
<label for="orgName">Organization name <small>(optional)</small></label><input id="orgName" name="orgName" maxlength="100" placeholder="Default">
<label for="ownerName">Your name <small>(optional)</small></label><input id="ownerName" name="ownerName" maxlength="100">
<label for="email">Your email <small>(optional)</small></label><input id="email" name="email" type="email" maxlength="320">
<button type="submit" name="method" value="setup_code">Approve</button>${
      oidc
        ? `
<p>or</p>
<button type="submit" name="method" value="oidc">Sign in with your identity provider</button>`
        : ""
    }</form>`,
  );
}

export function outcomePage(
  outcome: ApprovalOutcome,
  userCode: string,
  oidc = false,
): { html: string; status: 200 | 400 | 403 | 404 | 409 | 410 } {
  switch (outcome.outcome) {
    case "approved":
      return {
        status: 200,
        html: layout(
          "Installation activated",
          `<p class="ok">Approved. The device that started the activation now receives the owner API token; you can close this page.</p>`,
        ),
      };
    case "wrong_setup_code":
      return {
        status: 400,
        html: form(userCode, {
          error: `The setup code is not right. ${outcome.attemptsLeft} attempt(s) left for this activation.`,
          oidc,
        }),
      };
    case "denied":
      return {
        status: 403,
        html: layout("Activation denied", `<p class="error">Too many wrong setup codes: start a new activation.</p>`),
      };
    case "unknown_code":
      return { status: 404, html: form(userCode, { error: "No activation with this code is waiting.", oidc }) };
    case "expired":
      return {
        status: 410,
        html: layout("Activation expired", `<p class="error">This activation expired: start a new one.</p>`),
      };
    case "already_activated":
      return {
        status: 409,
        html: layout("Already activated", `<p>This installation is already activated.</p>`),
      };
  }
}
