import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

/** A path that leaves the workspace (`..`, an absolute path elsewhere, or a symlink pointing out). */
export class WorkspaceEscapeError extends Error {
  override readonly name = "WorkspaceEscapeError";
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * Resolves a path the model gave against the workspace root and refuses anything outside it.
 * Both the lexical path and the real path (symlinks followed, for the longest existing prefix)
 * must stay inside the real root: a symlink in the workspace pointing at /etc is refused.
 */
export function confine(root: string, requested: string): string {
  const realRoot = realpathSync(root);
  const lexical = resolve(realRoot, requested);
  if (!inside(realRoot, lexical)) throw new WorkspaceEscapeError(`${requested} is outside the workspace`);
  let existing = lexical;
  while (!existsSync(existing) && existing !== dirname(existing)) existing = dirname(existing);
  const real = realpathSync(existing);
  if (!inside(realRoot, real)) {
    throw new WorkspaceEscapeError(`${requested} resolves outside the workspace (through a symbolic link)`);
  }
  return existing === lexical ? real : resolve(real, relative(existing, lexical));
}
