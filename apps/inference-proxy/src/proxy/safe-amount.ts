/**
 * An amount the spend API takes: an integer a JSON number holds exactly. A larger estimate (an
 * output cap or a number of answers far past any model's) stays above every limit (at most
 * $1,000,000,000), so it is refused as over the limit rather than as a malformed reservation.
 */
export const atMostSafe = (microUsd: number) => Math.min(Number.MAX_SAFE_INTEGER, microUsd);
