import { SandboxSlots } from "./command-slots.ts";
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

const early = new SandboxSlots();

/**
 * Takes one of the service's early starts (its driver names the service), or answers undefined
 * when all are taken. Returns the release, to call once the start is decided, or undone.
 */
export function takeEarlyStart(deps: Pick<SandboxDeps, "driver" | "config">): (() => void) | undefined {
  // One count for the whole service, filed under a key no sandbox has.
  return early.tryTake(deps, "", deps.config.earlyStarts ?? DEFAULT_EARLY_STARTS);
}
