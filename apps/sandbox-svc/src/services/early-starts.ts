import type { SandboxDeps } from "./context.ts";

/**
 * How many started creates one service builds at once before they are decided (decision 0059). A
 * create that is refused still costs the host the sandbox it began; past this bound a create is
 * decided first, as a start of an existing sandbox is, so a burst of creates that will be refused
 * (an organization at its limit, a policy that denies) makes at most this many sandboxes the host
 * then undoes. Each is decided within milliseconds, so the bound does not slow a burst of admitted
 * creates down.
 */
export const DEFAULT_EARLY_STARTS = 16;

const held = new WeakMap<object, number>();

/**
 * Takes one of the service's early starts (its driver names the service), or answers undefined
 * when all are taken. Returns the release, to call once the start is decided, or undone.
 */
export function takeEarlyStart(deps: Pick<SandboxDeps, "driver" | "config">): (() => void) | undefined {
  const limit = deps.config.earlyStarts ?? DEFAULT_EARLY_STARTS;
  const now = held.get(deps.driver) ?? 0;
  if (now >= limit) return undefined;
  held.set(deps.driver, now + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.set(deps.driver, (held.get(deps.driver) ?? 1) - 1);
  };
}
