import { once } from "node:events";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";

const INTERVAL_MS = 100;
/** 16 MiB of 4 KiB pages: the WAL size past which the checkpointer empties it (TRUNCATE). */
const TRUNCATE_AT_PAGES = 4096;
/** SQLite's own default, restored when the checkpointer thread is gone. */
const AUTOCHECKPOINT_PAGES = 1000;
/** The thread stops after this long without a write, and starts again at the next one. */
const IDLE_MS = 15_000;

export interface Checkpointer {
  /** Whether the thread is running (it runs only while the database is being written). */
  readonly running: boolean;
  close(): Promise<void>;
}

/**
 * Moves WAL checkpoints off the main thread. By default SQLite checkpoints inside the commit
 * that crosses 1000 WAL pages, with an fsync (synchronous=NORMAL): measured on the webhook-run
 * insert pattern, that made the p99 group commit 13–17 ms instead of ~1 ms and doubled the
 * total write time, all of it blocking the receiver's event loop. Here the main connection never
 * checkpoints; a worker thread with its own connection runs a PASSIVE checkpoint every 100 ms,
 * and a TRUNCATE one once the WAL passes 16 MiB (see checkpoint-worker.ts).
 * A thread costs 20–30 MB of memory, so it runs only while the database is written: every ten
 * intervals (a second) the main thread reads its connection's change count (`total_changes()`),
 * starts the thread when it moved and stops it after `idleMs` without a change. Frames written
 * meanwhile wait in the WAL for the next thread (a clean close checkpoints them too).
 * Durability is unchanged: a commit is in the WAL when it returns, checkpointed or not. If the
 * thread fails, the main connection checkpoints by itself again so the WAL cannot grow unbounded.
 */
export function startCheckpointer(
  sqlite: Database.Database,
  path: string,
  options: { intervalMs?: number; truncateAtPages?: number; idleMs?: number } = {},
): Checkpointer {
  const intervalMs = options.intervalMs ?? INTERVAL_MS;
  const idleMs = options.idleMs ?? IDLE_MS;
  sqlite.pragma("wal_autocheckpoint = 0");
  const changes = sqlite.prepare("select total_changes()").pluck();
  let seen = changes.get() as number;
  let lastWrite = 0;
  let worker: Worker | undefined;
  let failed = false;
  let closing = false;

  const stop = async (w: Worker) => {
    const exited = once(w, "exit");
    w.postMessage({ type: "close" });
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2000).unref())]);
    await w.terminate();
  };
  const start = () => {
    const w = new Worker(new URL("./checkpoint-worker.ts", import.meta.url), {
      workerData: { path, intervalMs, truncateAtPages: options.truncateAtPages ?? TRUNCATE_AT_PAGES },
    });
    w.unref();
    // A thread that fails or exits unasked: the main connection checkpoints by itself again.
    const fallBack = () => {
      if (worker !== w || closing) return;
      worker = undefined;
      failed = true;
      clearInterval(watch);
      if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    };
    w.on("error", fallBack);
    w.on("exit", fallBack);
    worker = w;
  };
  const watch = setInterval(() => {
    if (failed || closing || !sqlite.open) return;
    const now = Date.now();
    const count = changes.get() as number;
    if (count !== seen) {
      seen = count;
      lastWrite = now;
      if (!worker) start();
    } else if (worker && now - lastWrite > idleMs) {
      const idle = worker;
      worker = undefined;
      void stop(idle);
    }
  }, intervalMs * 10);
  watch.unref();

  return {
    get running() {
      return worker !== undefined;
    },
    async close() {
      closing = true;
      clearInterval(watch);
      const w = worker;
      worker = undefined;
      if (w) await stop(w);
    },
  };
}
