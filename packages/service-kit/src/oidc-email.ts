import { z } from "zod";

/**
 * `OIDC_EMAIL_TRUST`: which email of an OpenID Connect token counts as its user's address.
 * `verified` (the default): only one the token vouches for with `email_verified: true` (or the
 * string `"true"` some providers send). `present`: any the token does not mark unverified, for a
 * provider that never sends the claim but whose addresses users cannot choose.
 */
export const OIDC_EMAIL_TRUST_VALUES = ["verified", "present"] as const;
export type OidcEmailTrust = (typeof OIDC_EMAIL_TRUST_VALUES)[number];

/** The setting, read the same way by the gateway and tenancy (an unknown value stops the start). */
export const OidcEmailTrustSchema = z
  .enum(OIDC_EMAIL_TRUST_VALUES, { error: "must be verified or present" })
  .default("verified");

/** Longer than any address (RFC 5321 allows 64 + 1 + 255); past it the claim is not an address. */
const MAX_EMAIL_LENGTH = 320;

/**
 * The address a verified token's claims vouch for under `trust`, or undefined. Invitations are
 * accepted by the user whose address matches, so an address anyone could have typed into their
 * profile at the provider (Entra ID's mutable `email`, the "nOAuth" case) must not count.
 */
export function trustedOidcEmail(claims: Readonly<Record<string, unknown>>, trust: OidcEmailTrust): string | undefined {
  const { email, email_verified: verified } = claims;
  if (typeof email !== "string" || email === "" || email.length > MAX_EMAIL_LENGTH) return undefined;
  if (verified === true || verified === "true") return email;
  if (trust === "verified") return undefined;
  return verified === false || verified === "false" ? undefined : email;
}

/**
 * The address a token carries without vouching for it under `trust` (the one `trustedOidcEmail`
 * leaves out), or undefined. A stored address equal to it is no longer the user's: the provider
 * does not vouch for it now (an address taken before verification was required, decision 0036).
 */
export function unvouchedOidcEmail(
  claims: Readonly<Record<string, unknown>>,
  trust: OidcEmailTrust,
): string | undefined {
  const { email } = claims;
  if (typeof email !== "string" || email === "" || email.length > MAX_EMAIL_LENGTH) return undefined;
  return trustedOidcEmail(claims, trust) === undefined ? email : undefined;
}
