// The WAL checkpointer thread (see checkpointer.ts): its own connection to the agent database,
// copying committed WAL frames back into the database file off the receiver's thread.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { path, intervalMs, truncateAtPages } = workerData as {
  path: string;
  intervalMs: number;
  truncateAtPages: number;
};
const db = new Database(path);
db.pragma("busy_timeout = 5000");
// PASSIVE never waits for the writer or readers: it copies what it can and tries again later.
const passive = db.prepare<[], { busy: number; log: number; checkpointed: number }>("pragma wal_checkpoint(PASSIVE)");
// Under steady writes a PASSIVE checkpoint is never complete when the next commit begins, so
// SQLite never rewinds the WAL and the file keeps growing. Past this size a TRUNCATE checkpoint
// (it briefly holds back the writer; nearly every frame is already copied, so that is short)
// empties it.
const truncate = db.prepare("pragma wal_checkpoint(TRUNCATE)");
const timer = setInterval(() => {
  try {
    const result = passive.get();
    if (result && result.log >= truncateAtPages) truncate.run();
  } catch (err) {
    parentPort?.postMessage({ type: "error", message: err instanceof Error ? err.message : String(err) });
  }
}, intervalMs);

parentPort?.on("message", (msg: { type: string }) => {
  if (msg.type !== "close") return;
  clearInterval(timer);
  // Stopped when idle: what was written since the last pass is copied before the thread goes.
  try {
    passive.get();
  } catch {
    // Busy: the frames wait in the WAL for the next thread.
  }
  db.close();
  parentPort?.close();
});
