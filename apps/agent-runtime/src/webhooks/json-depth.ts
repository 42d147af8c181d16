/**
 * How deep a webhook body may nest objects and arrays. Real senders (GitHub, Stripe, Slack) stay
 * under 20; a bound far below what recursion in JSON.stringify or a model SDK survives keeps a
 * hostile body (100,000 nested arrays fit in 200 KB) from crashing a render or a run.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests objects and arrays deeper than `max`: one pass over the characters,
 * brackets inside strings ignored, stopping at the first level past the bound (no parse, no
 * recursion). Text that is not JSON is left for the parser to refuse.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
