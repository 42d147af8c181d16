/**
 * Why a sign-in at the identity provider did not open a console session. The server sends the
 * browser back to `/sign-in?error=<code>` and the console shows the words of this table: a link
 * anyone can send, so the page must never show text taken from its address (a made-up "call
 * support at …" on the page where people paste their API tokens). An unknown code reads as `failed`.
 */
export const SIGN_IN_ERRORS = {
  failed: "Signing in with the identity provider did not succeed: try again.",
  not_configured: "Sign-in with an identity provider is not configured here.",
  provider_unreachable: "The identity provider cannot be reached.",
  provider_refused: "The identity provider did not sign you in.",
  code_refused: "The identity provider refused the authorization code.",
  not_for_this_sign_in: "The ID token was not issued for this sign-in.",
  token_unverified: "The identity provider's ID token could not be verified.",
  other_browser: "The sign-in does not match the one started from this browser.",
  no_code: "The identity provider sent no authorization code.",
  no_id_token: "The identity provider returned no ID token.",
  no_subject: "The ID token has no subject.",
  not_started: "No sign-in was started from this browser, or it has expired.",
  too_slow: "The sign-in took too long: start again.",
  sessions_limit:
    "You hold as many browser sessions as this installation allows: sign out of one (or revoke it), or ask an operator to raise the limit (OBJECT_LIMITS=sessions=<n>).",
} as const;

export type SignInErrorCode = keyof typeof SIGN_IN_ERRORS;

/** The words for a code from a sign-in page's address; undefined when there is none. */
export function signInErrorMessage(code: string | null | undefined): string | undefined {
  if (!code) return undefined;
  return Object.hasOwn(SIGN_IN_ERRORS, code) ? SIGN_IN_ERRORS[code as SignInErrorCode] : SIGN_IN_ERRORS.failed;
}
