/**
 * How the meeting page is read: accessible names of the controls and the texts of each state,
 * in one place so that a change of the service's wording is a change here only. Order matters:
 * denial is checked before the waiting-room text (a denied request can leave both on the page).
 */
export const PAGE = {
  signIn: { email: /^email/i, password: /^password/i, submit: /^(sign in|next)$/i },
  /** Challenges an unattended bot cannot pass: the attempt ends with this reason. */
  challenges: [
    { text: /2-step verification|verify it.s you|security key/i, reason: "the account asks for a 2-step challenge" },
    { text: /single sign-on|sso/i, reason: "the account requires single sign-on" },
    { text: /wrong password/i, reason: "the meeting account's password was refused" },
  ],
  prejoin: { name: /your name/i, ask: /^ask to join$/i, join: /^join now$/i },
  inCall: { leave: /^leave call$/i },
  /** Checked in this order on every look at the page. */
  states: [
    { state: "denied", text: /denied your request to join|you can.t join this call/i },
    { state: "ended", text: /the call has ended|you left the meeting|you.ve been removed from the meeting/i },
    { state: "waiting", text: /asking to be let in|someone in the call will let you in/i },
  ],
} as const;
