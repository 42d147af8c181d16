/** The token of an invitation's link rides in the fragment (`#token=…`), which no server sees. */
export function linkToken(hash: string): string {
  return new URLSearchParams(hash.replace(/^#/, "")).get("token") ?? "";
}

const stored = (invitationId: string) => `agentplane.invitation-link.${invitationId}`;

/**
 * Keeps a link's fragment in this tab for a sign-in at the identity provider, which returns to the
 * page by its path alone: the fragment never goes into the sign-in's `next` (an address servers
 * see and log).
 */
export function keepLinkFragment(invitationId: string, hash: string): void {
  try {
    sessionStorage.setItem(stored(invitationId), hash);
  } catch {
    // Storage refused (a private mode): the person opens the link again after signing in.
  }
}

/** The fragment kept for this invitation before a sign-in; "" when none was. */
export function keptLinkFragment(invitationId: string): string {
  try {
    return sessionStorage.getItem(stored(invitationId)) ?? "";
  } catch {
    return "";
  }
}

/** Forgets the fragment kept for this invitation (it is back in the address). */
export function forgetLinkFragment(invitationId: string): void {
  try {
    sessionStorage.removeItem(stored(invitationId));
  } catch {
    // Nothing was kept.
  }
}
