/**
 * Text the platform cannot store or forward faithfully: a NUL character (Postgres text and jsonb
 * reject 0x00) or a lone UTF-16 surrogate (not Unicode; it becomes U+FFFD or an error on the way
 * to UTF-8). Requests carrying either are refused at the edge with a 400 that names the field.
 */
export function unsafeTextReason(text: string): string | undefined {
  if (text.includes("\u0000")) return "must not contain a NUL character";
  if (!text.isWellFormed()) return "must be well-formed Unicode text (no lone surrogates)";
  return undefined;
}

/** Every string (and object key) inside a parsed value that `unsafeTextReason` refuses, with its path. */
export function findUnsafeText(
  value: unknown,
  path: readonly PropertyKey[] = [],
  found: { path: PropertyKey[]; message: string }[] = [],
): { path: PropertyKey[]; message: string }[] {
  if (found.length >= 20) return found;
  if (typeof value === "string") {
    const message = unsafeTextReason(value);
    if (message) found.push({ path: [...path], message });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      findUnsafeText(item, [...path, i], found);
    });
  } else if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    for (const [key, item] of Object.entries(value)) {
      const message = unsafeTextReason(key);
      if (message) found.push({ path: [...path, key], message: `field name ${message}` });
      findUnsafeText(item, [...path, key], found);
    }
  }
  return found;
}
