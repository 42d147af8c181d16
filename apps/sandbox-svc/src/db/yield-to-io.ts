import { setImmediate as nextTurn } from "node:timers/promises";
import type { KyselyPlugin } from "kysely";

/**
 * Hands each statement's result back after the I/O that arrived while it ran. On the embedded
 * database (PGlite) a statement runs on this thread and its result resolves in a microtask, so
 * the statements of a transaction run one after the other without the event loop reading any I/O
 * between them. A started create writes its rows while the driver builds the sandbox, and the
 * driver's next steps (the spawner's pid, bwrap's child pid, its mounts ready, each cgroup move)
 * are I/O callbacks: without a turn between statements they waited for the whole transaction.
 */
export const yieldToIo: KyselyPlugin = {
  transformQuery: (args) => args.node,
  transformResult: async (args) => {
    await nextTurn();
    return args.result;
  },
};
