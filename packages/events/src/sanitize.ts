/**
 * A copy of an event payload that every store accepts: NUL characters and lone UTF-16 surrogates
 * in strings (and keys) become U+FFFD. Requests carrying them are refused at the edge; this keeps a
 * record of such a request (an audit record of a refused call) storable instead of losing it.
 */
export function storablePayload<T>(value: T): T {
  return clean(value) as T;
}

function cleanText(text: string): string {
  return text.includes("\u0000") || !text.isWellFormed() ? text.replaceAll("\u0000", "\uFFFD").toWellFormed() : text;
}

function clean(value: unknown): unknown {
  if (typeof value === "string") return cleanText(value);
  if (Array.isArray(value)) return value.map(clean);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[cleanText(key)] = clean(item);
    return out;
  }
  return value;
}
