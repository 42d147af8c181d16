import { spawnSync } from "node:child_process";
import { existsSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { SECRET_KEY_FILE } from "../secrets/secret-box.ts";
import { WorkspaceEscapeError } from "./workspace.ts";

/**
 * What local commands and file tools may not touch. `hidden`: the runtime's secrets and what leads
 * to them (the `.env` with the model keys and tokens, the key that opens the secrets sealed in the
 * database, the database files, the meeting browser's signed-in profile), neither read nor written.
 * `readOnly`: the runtime's own folders (its home and data dir, and the plugins it loads as code:
 * a command writing there, or a new `.env`, would run with the runtime's secrets at the next
 * start), except what is `writable` inside them (the workspace, skills, the heartbeat checklist).
 */
export interface ProtectedPaths {
  hidden: { files: string[]; dirs: string[] };
  readOnly: string[];
  writable: string[];
}

export interface RuntimePaths {
  agentHome: string;
  dataDir: string;
  databasePath: string;
  workspaceRoot: string;
  skillsDir: string;
  pluginsDir: string;
}

const SQLITE_SIDE_FILES = ["", "-wal", "-shm", "-journal"];
/** `HEARTBEAT_FILE` of the heartbeat (not imported: the heartbeat imports the turns, which import the tools). */
const HEARTBEAT_CHECKLIST = "HEARTBEAT.md";

/** A path with its symbolic links resolved as far as it exists (a missing tail kept as written). */
function real(path: string): string {
  let existing = resolve(path);
  while (!existsSync(existing) && existing !== dirname(existing)) existing = dirname(existing);
  try {
    return resolve(realpathSync(existing), relative(existing, resolve(path)));
  } catch {
    return resolve(path);
  }
}

export function runtimeProtectedPaths(paths: RuntimePaths): ProtectedPaths {
  const files = new Set<string>([
    join(paths.agentHome, ".env"),
    join(paths.dataDir, ".env"),
    join(paths.dataDir, SECRET_KEY_FILE),
  ]);
  if (paths.databasePath !== ":memory:") {
    for (const database of [paths.databasePath, `${paths.databasePath}-vec`]) {
      for (const suffix of SQLITE_SIDE_FILES) files.add(`${database}${suffix}`);
    }
  }
  const unique = (list: string[]) => [...new Set(list.map(real))];
  return {
    hidden: { files: unique([...files]), dirs: unique([join(paths.dataDir, "meeting-profile")]) },
    readOnly: unique([paths.agentHome, paths.dataDir, paths.pluginsDir]),
    writable: unique([paths.workspaceRoot, paths.skillsDir, join(paths.dataDir, HEARTBEAT_CHECKLIST)]),
  };
}

function within(parent: string, path: string): boolean {
  const rel = relative(parent, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** The runtime's own configuration or secret files: refused to the file tools like a path outside. */
export class ProtectedPathError extends WorkspaceEscapeError {}

/** Why `path` (a real path) may not be read, or undefined when it may. */
export function refusedRead(masks: ProtectedPaths, path: string): string | undefined {
  if (masks.hidden.files.includes(path) || masks.hidden.dirs.some((dir) => within(dir, path))) {
    return "is one of the runtime's own configuration or secret files";
  }
  return undefined;
}

/** Why `path` (a real path) may not be written, or undefined when it may: the deepest rule wins. */
export function refusedWrite(masks: ProtectedPaths, path: string): string | undefined {
  const hidden = refusedRead(masks, path);
  if (hidden) return hidden;
  // Writable first: a workspace that is the runtime's home itself stays writable (the sort is stable).
  const rules = [
    ...masks.writable.map((dir) => ({ dir, writable: true })),
    ...masks.readOnly.map((dir) => ({ dir, writable: false })),
  ].filter((rule) => within(rule.dir, path));
  const deepest = rules.sort((a, b) => b.dir.length - a.dir.length)[0];
  return deepest && !deepest.writable ? "is in the runtime's own folders, which commands may not change" : undefined;
}

/** The file's identity, so a path swapped for a link to a protected file between check and open is caught. */
export function isHiddenFile(masks: ProtectedPaths, stats: { dev: number; ino: number }): boolean {
  return masks.hidden.files.some((file) => {
    try {
      const s = statSync(file);
      return s.dev === stats.dev && s.ino === stats.ino;
    } catch {
      return false;
    }
  });
}

/**
 * `bwrap` arguments that run a command with the host's file system as it is, except: the runtime's
 * folders read-only (the writable ones inside them bound back on top, parents first), the hidden files
 * unreadable and the hidden folders empty; in a PID namespace of its own (the runtime's process,
 * whose `/proc/<pid>/environ` holds its environment, is out of sight) and without capabilities (a
 * runtime run as root would otherwise let the command unmount the masks). Only paths that exist are
 * bound: bubblewrap would create a missing one on the host.
 */
export function bubblewrapArgs(cwd: string, masks: ProtectedPaths): string[] {
  const args = ["--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"];
  const isDir = (path: string) => existsSync(path) && statSync(path).isDirectory();
  const binds = [
    ...masks.readOnly.map((path) => ({ path, flag: "--ro-bind" })),
    ...masks.writable
      .filter((path) => masks.readOnly.some((dir) => within(dir, path)))
      .map((path) => ({ path, flag: "--bind" })),
  ]
    .filter((bind) => existsSync(bind.path))
    .sort((a, b) => a.path.split(sep).length - b.path.split(sep).length);
  for (const { path, flag } of binds) args.push(flag, path, path);
  for (const file of masks.hidden.files) {
    if (existsSync(file) && !statSync(file).isDirectory()) args.push("--ro-bind", "/dev/null", file);
  }
  for (const dir of masks.hidden.dirs) if (isDir(dir)) args.push("--tmpfs", dir, "--remount-ro", dir);
  args.push("--chdir", cwd);
  return args;
}

/** Whether bubblewrap is installed and can make its namespaces here (a container may forbid them). */
export function bubblewrapWorks(command = "bwrap"): boolean {
  const empty: ProtectedPaths = { hidden: { files: [], dirs: [] }, readOnly: [], writable: [] };
  const probe = spawnSync(command, [...bubblewrapArgs("/", empty), "/bin/sh", "-c", ":"], {
    stdio: "ignore",
    timeout: 10_000,
  });
  return probe.status === 0;
}
