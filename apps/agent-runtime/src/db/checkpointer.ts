import { once } from "node:events";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";

const INTERVAL_MS = 100;
/** 16 MiB of 4 KiB pages: the WAL size past which the checkpointer empties it (TRUNCATE). */
const TRUNCATE_AT_PAGES = 4096;
/** SQLite's own default, restored when the checkpointer thread is gone. */
const AUTOCHECKPOINT_PAGES = 1000;

export interface Checkpointer {
  close(): Promise<void>;
}

/**
 * Moves WAL checkpoints off the main thread. By default SQLite checkpoints inside the commit
 * that crosses 1000 WAL pages, with an fsync (synchronous=NORMAL): measured on the webhook-run
 * insert pattern, that made the p99 group commit 13–17 ms instead of ~1 ms and doubled the
 * total write time, all of it blocking the receiver's event loop. Here the main connection never
 * checkpoints; a worker thread with its own connection runs a PASSIVE checkpoint every 100 ms,
 * and a TRUNCATE one once the WAL passes 16 MiB (see checkpoint-worker.ts).
 * Durability is unchanged: a commit is in the WAL when it returns, checkpointed or not. If the
 * thread fails, the main connection checkpoints by itself again so the WAL cannot grow unbounded.
 */
export function startCheckpointer(
  sqlite: Database.Database,
  path: string,
  options: { intervalMs?: number; truncateAtPages?: number } = {},
): Checkpointer {
  sqlite.pragma("wal_autocheckpoint = 0");
  const worker = new Worker(new URL("./checkpoint-worker.ts", import.meta.url), {
    workerData: {
      path,
      intervalMs: options.intervalMs ?? INTERVAL_MS,
      truncateAtPages: options.truncateAtPages ?? TRUNCATE_AT_PAGES,
    },
  });
  worker.unref();
  let closing = false;
  const fallBack = () => {
    if (!closing && sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  };
  worker.on("error", fallBack);
  worker.on("exit", fallBack);
  return {
    async close() {
      closing = true;
      const exited = once(worker, "exit");
      worker.postMessage({ type: "close" });
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2000).unref())]);
      await worker.terminate();
    },
  };
}
