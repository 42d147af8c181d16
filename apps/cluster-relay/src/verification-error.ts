/** A request down the tunnel that the relay refuses to act on (answered 401 `unverified`). */
export class VerificationError extends Error {}
