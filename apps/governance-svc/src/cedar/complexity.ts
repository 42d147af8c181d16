import type { FieldError } from "@agentplane/problem-details";
import { ProblemError } from "@agentplane/problem-details";

/**
 * Bounds on a policy body's shape, checked before Cedar sees it. Cedar's WebAssembly parser and
 * evaluator recurse once per nesting level and per operator of a chain; a few hundred levels
 * overflow the stack inside the module, and a module that overflowed once answers every later call
 * (other tenants' policies and every decision) with "memory access out of bounds" until the
 * process restarts. Real policies stay far below these bounds.
 */
export const MAX_NESTING_DEPTH = 32;
export const MAX_OPERATORS_PER_STATEMENT = 256;
/**
 * Statements per policy body. Compiling takes about a millisecond per statement (parse, schema
 * validation, one JSON conversion each), so a 256 KiB body of thousands of tiny statements took
 * seconds; with this bound (and the byte bound) one body compiles in about a second at most, on
 * the compiling thread (decision 0042).
 */
export const MAX_STATEMENTS_PER_POLICY = 200;

const KEYWORD_OPERATORS = new Set(["if", "in", "has", "like", "is"]);
const SYMBOL_OPERATORS = ["&&", "||", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "!", "."];

interface Excess {
  kind: "depth" | "operators" | "statements";
  offset: number;
  statement: number;
}

/** Where the body first exceeds a bound (strings and comments skipped), or undefined. */
function firstExcess(text: string): Excess | undefined {
  let depth = 0;
  let operators = 0;
  let statement = 1;
  for (let i = 0; i < text.length; ) {
    const ch = text[i]!;
    if (ch === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
      continue;
    }
    if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (ch === "(" || ch === "[" || ch === "{") {
      depth++;
      if (depth > MAX_NESTING_DEPTH) return { kind: "depth", offset: i, statement };
      i++;
      continue;
    }
    if (ch === ")" || ch === "]" || ch === "}") {
      depth = Math.max(0, depth - 1);
      i++;
      continue;
    }
    if (ch === ";") {
      if (statement > MAX_STATEMENTS_PER_POLICY) return { kind: "statements", offset: i, statement };
      statement++;
      operators = 0;
      i++;
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      let end = i + 1;
      while (end < text.length && /[A-Za-z0-9_]/.test(text[end]!)) end++;
      if (KEYWORD_OPERATORS.has(text.slice(i, end)) && ++operators > MAX_OPERATORS_PER_STATEMENT) {
        return { kind: "operators", offset: i, statement };
      }
      i = end;
      continue;
    }
    const symbol = SYMBOL_OPERATORS.find((s) => text.startsWith(s, i));
    if (symbol) {
      if (++operators > MAX_OPERATORS_PER_STATEMENT) return { kind: "operators", offset: i, statement };
      i += symbol.length;
      continue;
    }
    i++;
  }
  return undefined;
}

/**
 * Throws a 400 problem when the body nests deeper than MAX_NESTING_DEPTH brackets, one statement
 * holds more than MAX_OPERATORS_PER_STATEMENT operators or the body more than
 * MAX_STATEMENTS_PER_POLICY statements; `locate` turns an offset into line and column.
 */
export function checkPolicyComplexity(
  text: string,
  pointer: string,
  locate: (offset: number) => { line: number; column: number },
): void {
  const excess = firstExcess(text);
  if (!excess) return;
  const { line, column } = locate(Buffer.byteLength(text.slice(0, excess.offset), "utf8"));
  const where = `line ${line}, column ${column}`;
  const message =
    excess.kind === "depth"
      ? `${where}: brackets nest deeper than ${MAX_NESTING_DEPTH} levels`
      : excess.kind === "operators"
        ? `${where}: statement #${excess.statement} has more than ${MAX_OPERATORS_PER_STATEMENT} operators`
        : `${where}: a policy holds at most ${MAX_STATEMENTS_PER_POLICY} statements`;
  const error: FieldError & { line: number; column: number } = { pointer, message, line, column };
  throw new ProblemError("validation-failed", {
    detail:
      excess.kind === "statements"
        ? "The Cedar policy has too many statements: split it into several policies"
        : "The Cedar policy is too complex: split it into simpler statements",
    errors: [error],
  });
}
