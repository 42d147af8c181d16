import { ProblemError } from "@agentplane/problem-details";
import type { SandboxDeps } from "./context.ts";

/**
 * Commands (execs and WebSocket exec streams) one sandbox may run at once through the API. Each is
 * a process with pipes the service holds, and its output buffered here up to a bound (1 MiB per
 * stream for an exec, 8 MiB for a stream whose client does not read): without a bound on how
 * many, one caller could start them until the service ran out of memory or file descriptors.
 * Shell sessions have a bound of their own.
 */
export const MAX_COMMANDS_PER_SANDBOX = 64;

/**
 * Counts of something a sandbox holds open (commands, ingress connections), per sandbox, for each
 * service (its driver names it, so two services in one process count apart).
 */
export class SandboxSlots {
  readonly #counts = new WeakMap<object, Map<string, number>>();

  /**
   * Takes one of the sandbox's `limit` slots, or throws what `refused` makes when all are taken.
   * Returns the release, to call once the thing has ended (calling it again does nothing).
   */
  take(deps: Pick<SandboxDeps, "driver">, sandboxId: string, limit: number, refused: () => Error): () => void {
    const release = this.tryTake(deps, sandboxId, limit);
    if (!release) throw refused();
    return release;
  }

  /** Whether the sandbox holds any of its slots now. */
  holds(deps: Pick<SandboxDeps, "driver">, sandboxId: string): boolean {
    return (this.#counts.get(deps.driver)?.get(sandboxId) ?? 0) > 0;
  }

  /** Takes one of the `limit` slots filed under `sandboxId`, or answers undefined when all are taken. */
  tryTake(deps: Pick<SandboxDeps, "driver">, sandboxId: string, limit: number): (() => void) | undefined {
    let counts = this.#counts.get(deps.driver);
    if (!counts) {
      counts = new Map();
      this.#counts.set(deps.driver, counts);
    }
    const held = counts.get(sandboxId) ?? 0;
    if (held >= limit) return undefined;
    counts.set(sandboxId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (counts.get(sandboxId) ?? 1) - 1;
      if (left > 0) counts.set(sandboxId, left);
      else counts.delete(sandboxId);
    };
  }
}

const commands = new SandboxSlots();

/**
 * Connections open through the ingress, per sandbox: each is someone using the sandbox's port (a
 * page's event stream, a WebSocket), so one open keeps the sandbox from its idle stop.
 */
export const ingressConnections = new SandboxSlots();

/**
 * Takes one of the sandbox's command slots, or refuses with a 409 `limit-exceeded` when all are
 * taken. Returns the release, to call once the command's process has ended.
 */
export function takeCommandSlot(deps: Pick<SandboxDeps, "driver">, sandboxId: string): () => void {
  return commands.take(
    deps,
    sandboxId,
    MAX_COMMANDS_PER_SANDBOX,
    () =>
      new ProblemError("limit-exceeded", {
        detail: `Sandbox ${sandboxId} already runs ${MAX_COMMANDS_PER_SANDBOX} commands through the API, its limit. Wait for one to end.`,
        extensions: { kind: "running-commands", limit: MAX_COMMANDS_PER_SANDBOX },
      }),
  );
}
