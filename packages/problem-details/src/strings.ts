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

/** A value still to be looked at, and how it was reached (its key, the value holding it). */
interface Visit {
  value: unknown;
  key: PropertyKey | undefined;
  /** The key is an object's field name, checked like any string. */
  named: boolean;
  parent: Visit | undefined;
}

function pathTo(visit: Visit, root: readonly PropertyKey[]): PropertyKey[] {
  const keys: PropertyKey[] = [];
  for (let v: Visit | undefined = visit; v?.key !== undefined; v = v.parent) keys.push(v.key);
  return [...root, ...keys.reverse()];
}

/**
 * Every string (and object key) inside a parsed value that `unsafeTextReason` refuses, with its
 * path, in document order (at most 20). Walked with a stack of its own, not by recursion: a body
 * nested 100,000 levels deep (well inside a 1 MiB limit) is walked like a flat one, in time
 * proportional to its size, instead of overflowing the call stack.
 */
export function findUnsafeText(
  value: unknown,
  path: readonly PropertyKey[] = [],
  found: { path: PropertyKey[]; message: string }[] = [],
): { path: PropertyKey[]; message: string }[] {
  const stack: Visit[] = [{ value, key: undefined, named: false, parent: undefined }];
  while (stack.length > 0 && found.length < 20) {
    const visit = stack.pop() as Visit;
    if (visit.named) {
      const message = unsafeTextReason(visit.key as string);
      if (message) found.push({ path: pathTo(visit, path), message: `field name ${message}` });
    }
    const current = visit.value;
    if (typeof current === "string") {
      const message = unsafeTextReason(current);
      if (message) found.push({ path: pathTo(visit, path), message });
    } else if (Array.isArray(current)) {
      // Pushed last to first, so they are taken first to last.
      for (let i = current.length - 1; i >= 0; i--)
        stack.push({ value: current[i], key: i, named: false, parent: visit });
    } else if (current !== null && typeof current === "object" && !(current instanceof Date)) {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i] as [string, unknown];
        stack.push({ value: item, key, named: true, parent: visit });
      }
    }
  }
  return found;
}
