import { chmodSync, closeSync, mkdirSync, openSync, statSync } from "node:fs";

/**
 * The runtime's data directory, readable by its owner only: it holds the database (conversation
 * history, sealed secrets) and the key that opens them. Made with mode 0700; one that already
 * exists with wider permissions (made by hand, or under an earlier version) is closed at start.
 */
export function prepareDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if ((statSync(dataDir).mode & 0o077) !== 0) chmodSync(dataDir, 0o700);
}

/**
 * Makes the SQLite file owner-only (0600) before SQLite opens it, whatever the umask: SQLite
 * would create it with 0644 less the umask, and it gives the `-wal` and `-shm` files it creates
 * the database file's mode. Ones an earlier start left wider are closed too.
 */
export function protectDatabaseFiles(path: string): void {
  closeSync(openSync(path, "a", 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    let mode: number;
    try {
      mode = statSync(file).mode;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    if ((mode & 0o077) !== 0) chmodSync(file, 0o600);
  }
}
