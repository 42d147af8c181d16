/**
 * Label selectors in the Kubernetes syntax: comma-separated requirements `key=value`, `key==value`,
 * `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key` (exists) and `!key` (does not exist).
 */
export type SelectorRequirement =
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "in" | "notin"; values: string[] }
  | { key: string; op: "exists" | "!exists" };

const KEY = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Splits on commas outside parentheses. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  parts.push(current);
  return parts;
}

/** Parses a selector; throws an Error whose message says what does not parse. */
export function parseSelector(text: string): SelectorRequirement[] {
  if (text.trim() === "") return [];
  return splitTop(text).map((raw) => {
    const part = raw.trim();
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (set) {
      const values = set[3]!.split(",").map((v) => v.trim());
      if (!KEY.test(set[1]!) || values.some((v) => !VALUE.test(v))) throw new Error(`cannot parse "${part}"`);
      return { key: set[1]!, op: set[2] as "in" | "notin", values };
    }
    const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part);
    if (cmp) {
      if (!KEY.test(cmp[1]!) || !VALUE.test(cmp[3]!)) throw new Error(`cannot parse "${part}"`);
      return { key: cmp[1]!, op: cmp[2] === "!=" ? "!=" : "=", value: cmp[3]! };
    }
    const not = /^!\s*(\S+)$/.exec(part);
    if (not && KEY.test(not[1]!)) return { key: not[1]!, op: "!exists" };
    if (KEY.test(part)) return { key: part, op: "exists" };
    throw new Error(`cannot parse "${part}"`);
  });
}

export function matchesSelector(requirements: readonly SelectorRequirement[], labels: Record<string, string>): boolean {
  return requirements.every((r) => {
    const value = labels[r.key];
    switch (r.op) {
      case "=":
        return value === r.value;
      case "!=":
        return value !== r.value;
      case "in":
        return value !== undefined && r.values.includes(value);
      case "notin":
        return value === undefined || !r.values.includes(value);
      case "exists":
        return value !== undefined;
      case "!exists":
        return value === undefined;
    }
    return false;
  });
}
