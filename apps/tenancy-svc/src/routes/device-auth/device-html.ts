import type { DecisionOutcome, DeviceLookup } from "../../services/device-auth.ts";
import { escapeHtml, layout } from "../installation/activate-html.ts";

// The sign-in device flow's approval page (`/device`), server-rendered like `/activate`.

export interface PageState {
  userCode: string;
  lookup?: DeviceLookup | undefined;
  /** Who the browser session is signed in as; absent without a session. */
  signedInAs?: string | undefined;
  csrfToken?: string | undefined;
  error?: string | undefined;
}

/** The `step` of the page's form that asks to sign in before deciding (not a decision). */
export const SIGN_IN_STEP = "sign-in";

const alert = (error: string | undefined) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "");

/**
 * The console's sign-in, which comes back to this page afterwards. The address carries no code (a
 * sign-in link can come from anywhere, and the console never carries a code back): the page shows
 * the code it kept before the sign-in (kept-code.ts), or its empty form.
 */
export function signInLink(): string {
  return `/sign-in?next=${encodeURIComponent("/device")}`;
}

function codeForm(state: PageState): string {
  return layout(
    "Sign in a device",
    `${alert(state.error)}
<p>Enter the code your command-line client or device shows.</p>
<form method="get" action="/device">
<label for="code">Code</label><input id="code" name="code" value="${escapeHtml(state.userCode)}" required autocomplete="off">
<button type="submit">Continue</button></form>`,
  );
}

export function devicePage(state: PageState): string {
  const lookup = state.lookup;
  if (!state.userCode || !lookup || lookup.state === "unknown") {
    return codeForm({
      ...state,
      error: state.error ?? (state.userCode ? "No sign-in with this code is waiting." : undefined),
    });
  }
  if (lookup.state === "expired") {
    return layout("Code expired", `<p class="error">This code expired: start the sign-in again on the device.</p>`);
  }
  if (lookup.state !== "pending") {
    return layout("Already decided", `<p>This sign-in was already approved or denied.</p>`);
  }
  const code = escapeHtml(state.userCode);
  const asks = `<p><strong>${escapeHtml(lookup.clientName)}</strong> asks to sign in as you.</p>
<p>Check that it shows the code <strong id="user-code">${code}</strong>. Approving gives it an API token with your access, for 30 days.</p>`;
  const buttons = `<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>`;
  if (state.signedInAs && state.csrfToken) {
    return layout(
      "Approve a sign-in",
      `${alert(state.error)}${asks}<p>Signed in as ${escapeHtml(state.signedInAs)}.</p>
<form method="post" action="/device">
<input type="hidden" name="userCode" value="${code}"><input type="hidden" name="csrfToken" value="${escapeHtml(state.csrfToken)}">
${buttons}</form>`,
    );
  }
  // Signing in is a form of this page, not a link: sent from the page itself, it has the code kept
  // for the person's return (submit.ts), as a code typed here is, and goes on to the sign-in.
  return layout(
    "Approve a sign-in",
    `${alert(state.error)}${asks}
<form method="post" action="/device">
<input type="hidden" name="userCode" value="${code}"><input type="hidden" name="step" value="${SIGN_IN_STEP}">
<button type="submit">Sign in to decide</button></form>
<p>Or paste an API token of yours (used once for this decision, not kept).</p>
<form method="post" action="/device">
<input type="hidden" name="userCode" value="${code}">
<label for="token">API token</label><input id="token" name="token" type="password" autocomplete="off" required>
${buttons}</form>`,
  );
}

export function decisionPage(outcome: DecisionOutcome): { html: string; status: 200 | 404 | 409 | 410 } {
  switch (outcome.outcome) {
    case "approved":
      return {
        status: 200,
        html: layout(
          "Sign-in approved",
          `<p class="ok">Approved. ${escapeHtml(outcome.clientName)} now receives a token with the ${escapeHtml(outcome.role)} role; you can close this page.</p>`,
        ),
      };
    case "denied":
      return {
        status: 200,
        html: layout("Sign-in denied", `<p>Denied. ${escapeHtml(outcome.clientName)} gets no token.</p>`),
      };
    case "unknown":
      return { status: 404, html: codeForm({ userCode: "", error: "No sign-in with this code is waiting." }) };
    case "expired":
      return { status: 410, html: layout("Code expired", `<p class="error">This code expired.</p>`) };
    case "decided":
      return { status: 409, html: layout("Already decided", `<p>This sign-in was already approved or denied.</p>`) };
  }
}
