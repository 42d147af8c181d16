/**
 * An event payload that every store accepts: NUL characters and lone UTF-16 surrogates in strings
 * (and keys) become U+FFFD. Requests carrying them are refused at the edge; this keeps a record of
 * such a request (an audit record of a refused call) storable instead of losing it. A payload with
 * nothing to replace is returned as it is (checking allocates nothing); otherwise a copy is made of
 * the objects and arrays on the way to each replaced string, never changing the caller's value.
 */
export function storablePayload<T>(value: T): T {
  return clean(value) as T;
}

const cleanText = (text: string): string =>
  text.includes("\u0000") || !text.isWellFormed() ? text.replaceAll("\u0000", "\uFFFD").toWellFormed() : text;

/**
 * Keys found clean before: payloads repeat the same few field names, and looking one up here is
 * cheaper than checking it again. Bounded, so that payloads with ever new keys cannot grow it.
 */
const cleanKeys = new Set<string>();
const MAX_CLEAN_KEYS = 4096;

function cleanKey(key: string): string {
  if (cleanKeys.has(key)) return key;
  const cleaned = cleanText(key);
  if (cleaned === key && cleanKeys.size < MAX_CLEAN_KEYS) cleanKeys.add(key);
  return cleaned;
}

function clean(value: unknown): unknown {
  if (typeof value === "string") return cleanText(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const cleaned = clean(item);
      if (cleaned !== item && !out) out = value.slice(0, i);
      out?.push(cleaned);
    }
    return out ?? value;
  }
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const record = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const item = record[key];
      const cleanedKey = cleanKey(key);
      const cleaned = clean(item);
      if (!out && (cleaned !== item || cleanedKey !== key)) {
        out = {};
        // The entries before this one, unchanged.
        for (const before in record) {
          if (before === key) break;
          if (Object.hasOwn(record, before)) out[before] = record[before];
        }
      }
      if (out) out[cleanedKey] = cleaned;
    }
    return out ?? value;
  }
  return value;
}
