/** A Cedar validation error the API located (`errors[]` of a 400 with `line` and `column`, 1-based). */
export interface CedarError {
  line: number;
  column: number;
  message: string;
}

/** The located errors of a policy problem; errors without a position land on line 1. */
export function cedarErrors(errors: unknown): CedarError[] {
  if (!Array.isArray(errors)) return [];
  return errors.map((e: { line?: unknown; column?: unknown; message?: unknown }) => ({
    line: typeof e.line === "number" ? e.line : 1,
    column: typeof e.column === "number" ? e.column : 1,
    message: String(e.message ?? "invalid").replace(/^line \d+, column \d+: /, ""),
  }));
}

/** The character offset of a 1-based line and column in `text` (clamped to the text). */
export function offsetOf(text: string, line: number, column: number): number {
  const lines = text.split("\n");
  let offset = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length - 1); i++) offset += lines[i]!.length + 1;
  const current = lines[Math.min(line, lines.length) - 1] ?? "";
  return Math.min(offset + Math.max(0, column - 1), offset + current.length, text.length);
}
