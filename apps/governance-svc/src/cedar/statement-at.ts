/** How a statement is named in errors: by its `@id("…")`, else by its 0-based position in the text. */
export function statementLabel(id: string | undefined, index: number): string {
  return id !== undefined ? `@id("${id}")` : `#${index + 1} (no @id)`;
}

/**
 * How the statement around a byte offset of a policy text is named in errors: `@id("…")` when it
 * carries one, else its position (`#2 (no @id)`). Used where Cedar cannot split the text into
 * statements (a syntax error), so the statements are found by their `;` outside strings and comments.
 */
export function statementAt(text: string, byteOffset: number): string {
  const at = Buffer.from(text, "utf8").subarray(0, byteOffset).toString("utf8").length;
  let start = 0;
  let index = 0;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (ch === ";") {
      if (at <= i) break;
      start = i + 1;
      index++;
    }
    i++;
  }
  const statement = text.slice(start, i + 1);
  const id = /@id\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)/.exec(statement.replace(/\/\/[^\n]*/g, ""))?.[1];
  return statementLabel(id, index);
}
