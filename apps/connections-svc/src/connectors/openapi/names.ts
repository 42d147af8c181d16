export const MAX_TOOL_NAME = 64;

/** `[a-zA-Z0-9_-]` only, runs of anything else become one `_`, at most 64 characters. */
export function sanitizeToolName(raw: string): string {
  const name = raw
    .replace(/[^a-zA-Z0-9_-]+/g, "_")
    .replace(/^[_-]+|[_-]+$/g, "")
    .slice(0, MAX_TOOL_NAME)
    .replace(/[_-]+$/, "");
  return name || "operation";
}

/** `GET /users/{id}/posts` → `get_users_id_posts`. */
export function nameFromMethodAndPath(method: string, path: string): string {
  return sanitizeToolName(`${method}_${path.replace(/[^a-zA-Z0-9]+/g, "_")}`.replace(/_+/g, "_"));
}

/** Hands out unique names: the second `x` becomes `x_2`, truncated so the suffix still fits. */
export class NameAllocator {
  private readonly taken = new Set<string>();

  allocate(base: string): string {
    if (!this.taken.has(base)) {
      this.taken.add(base);
      return base;
    }
    for (let n = 2; ; n++) {
      const suffix = `_${n}`;
      const candidate = `${base.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
      if (!this.taken.has(candidate)) {
        this.taken.add(candidate);
        return candidate;
      }
    }
  }
}
