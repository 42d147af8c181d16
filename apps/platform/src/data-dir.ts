import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * The all-in-one's data directory, readable by its owner only: it holds the database (people,
 * token hashes, encrypted credentials, the audit trail) and the key that decrypts them. Made with
 * mode 0700; one an earlier version left open to other users of the machine is closed at start.
 *
 * `searchable`: local sandboxes under it run as a host user of their own, whose bwrap must reach
 * their workspaces in `sandboxes/`. Then others may search it (0711), not list it, and every entry
 * but `sandboxes` is its owner's alone (`closeDataDirEntries`, again once the start made them).
 */
export function prepareDataDir(dataDir: string, options: { searchable?: boolean } = {}): void {
  const wanted = options.searchable ? 0o711 : 0o700;
  mkdirSync(dataDir, { recursive: true, mode: wanted });
  if ((statSync(dataDir).mode & 0o777) !== wanted) chmodSync(dataDir, wanted);
  if (options.searchable) closeDataDirEntries(dataDir);
}

/** Where local sandboxes keep their workspaces in the data dir; the one entry others may search. */
export const SANDBOXES_ENTRY = "sandboxes";

/**
 * Makes every entry of the data dir but `sandboxes` its owner's alone (group and other bits off): a
 * directory's content is then out of others' reach whatever its own mode (PGlite's files are 0644).
 */
export function closeDataDirEntries(dataDir: string): void {
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    if (entry.name === SANDBOXES_ENTRY || entry.isSymbolicLink()) continue;
    const path = join(dataDir, entry.name);
    const { mode } = statSync(path);
    if ((mode & 0o077) !== 0) chmodSync(path, mode & 0o700);
  }
}

/** A second all-in-one started on a data directory that a running one holds. */
export class DataDirInUseError extends Error {
  readonly pid: number;
  constructor(dataDir: string, pid: number) {
    super(
      `the data directory ${dataDir} is in use by process ${pid} (another npm start?): stop that one, or set AGENTPLANE_DATA_DIR to another directory`,
    );
    this.name = "DataDirInUseError";
    this.pid = pid;
  }
}

/**
 * Whether `pid` is a live Node process. Where /proc says what a pid runs (Linux), a pid reused by
 * something else (a container's init after a restart) is no holder.
 */
const holds = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  let program: string | undefined;
  try {
    program = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0];
  } catch {
    return true;
  }
  return program === undefined || basename(program).startsWith("node");
};

/**
 * Holds the data directory for this process, before anything opens it: two processes on one
 * embedded database (PGlite keeps no lock of its own) would both write its files, and both
 * drive the same sandboxes. `agentplane.pid` names the holder; one left by a process that is gone
 * (killed, crashed, or this same pid in a restarted container) is taken over. Returns the release.
 */
export function lockDataDir(dataDir: string, pid = process.pid): () => void {
  const file = join(dataDir, "agentplane.pid");
  for (;;) {
    try {
      writeFileSync(file, `${pid}\n`, { flag: "wx", mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    let holder = Number.NaN;
    try {
      holder = Number.parseInt(readFileSync(file, "utf8"), 10);
    } catch {
      // Released between the two calls: try again.
    }
    if (Number.isInteger(holder) && holder > 0 && holder !== pid && holds(holder)) {
      throw new DataDirInUseError(dataDir, holder);
    }
    try {
      unlinkSync(file);
    } catch {
      // Another starter took it over first: its pid decides on the next turn.
    }
  }
  return () => {
    try {
      if (Number.parseInt(readFileSync(file, "utf8"), 10) === pid) unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
}
