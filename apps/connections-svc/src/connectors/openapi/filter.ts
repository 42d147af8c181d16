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

const globCache = new Map<string, RegExp>();

export function pathMatches(pattern: string, path: string): boolean {
  if (!pattern.includes("*")) return pattern === path;
  let re = globCache.get(pattern);
  if (!re) {
    const body = pattern
      .split(/(\*\*|\*)/)
      .map((part) => (part === "**" ? ".*" : part === "*" ? "[^/]*" : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")))
      .join("");
    re = new RegExp(`^${body}$`);
    globCache.set(pattern, re);
  }
  return re.test(path);
}
