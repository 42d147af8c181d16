/** Include/exclude selection of operations by tag, path (glob: `*` one segment, `**` any) and method. */
export interface OperationFilter {
  tags?: string[] | undefined;
  paths?: string[] | undefined;
  methods?: string[] | undefined;
}

export interface OperationRef {
  method: string;
  path: string;
  tags: string[];
}

/**
 * An operation is kept when it matches every dimension `include` names (any value within one) and
 * no value `exclude` names in any dimension.
 */
export function selectOperation(op: OperationRef, include?: OperationFilter, exclude?: OperationFilter): boolean {
  if (include) {
    if (include.tags?.length && !include.tags.some((t) => op.tags.includes(t))) return false;
    if (include.paths?.length && !include.paths.some((p) => pathMatches(p, op.path))) return false;
    if (include.methods?.length && !include.methods.some((m) => m.toLowerCase() === op.method)) return false;
  }
  if (exclude) {
    if (exclude.tags?.some((t) => op.tags.includes(t))) return false;
    if (exclude.paths?.some((p) => pathMatches(p, op.path))) return false;
    if (exclude.methods?.some((m) => m.toLowerCase() === op.method)) return false;
  }
  return true;
}

type GlobToken = "*" | "**" | { char: string };

/**
 * Globs are tenant input, so they are matched by one pass over the path per pattern token
 * (O(pattern × path)) rather than compiled into a backtracking RegExp: `/**a**a**a…**b` made
 * `^.*a.*a….*b$` take seconds on a 40-character path and stalled every tenant's requests.
 */
export function pathMatches(pattern: string, path: string): boolean {
  if (!pattern.includes("*")) return pattern === path;
  const tokens: GlobToken[] = [];
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== "*") tokens.push({ char: pattern[i] as string });
    else if (pattern[i + 1] === "*") {
      tokens.push("**");
      i++;
    } else tokens.push("*");
  }
  // matched[j]: the tokens so far match the first j characters of the path.
  let matched = new Array<boolean>(path.length + 1).fill(false);
  matched[0] = true;
  for (const token of tokens) {
    const next = new Array<boolean>(path.length + 1).fill(false);
    for (let j = 0; j <= path.length; j++) {
      if (typeof token === "object") next[j] = j > 0 && !!matched[j - 1] && path[j - 1] === token.char;
      else next[j] = !!matched[j] || (j > 0 && !!next[j - 1] && (token === "**" || path[j - 1] !== "/"));
    }
    matched = next;
  }
  return !!matched[path.length];
}
