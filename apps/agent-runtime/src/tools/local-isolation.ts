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
export function realPath(path: string): string {
  let existing = resolve(path);
  while (!existsSync(existing) && existing !== dirname(existing)) existing = dirname(existing);
  try {
    return resolve(realpathSync(existing), relative(existing, resolve(path)));
  } catch {
    return resolve(path);
  }
}

/**
 * The runtime's own protected paths. `launcherHidden`: what the process that started the runtime
 * keeps beside it (the all-in-one's data dir, with its database and its secret key), hidden as a
 * whole; the runtime's own folders inside it stay as above.
 */
export function runtimeProtectedPaths(paths: RuntimePaths, launcherHidden: readonly string[] = []): ProtectedPaths {
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
  const unique = (list: readonly string[]) => [...new Set(list.map(realPath))];
  return {
    hidden: { files: unique([...files]), dirs: unique([join(paths.dataDir, "meeting-profile"), ...launcherHidden]) },
    readOnly: unique([paths.agentHome, paths.dataDir, paths.pluginsDir]),
    writable: unique([paths.workspaceRoot, paths.skillsDir, join(paths.dataDir, HEARTBEAT_CHECKLIST)]),
  };
}

function within(parent: string, path: string): boolean {
  const rel = relative(parent, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

type Access = "hidden" | "readOnly" | "writable";

/**
 * The folder rules in the order they apply on the same path: a workspace that is the runtime's
 * home itself stays writable, a hidden folder that is also one of its own folders stays visible.
 */
function rulesOf(masks: ProtectedPaths): Array<{ path: string; access: Access }> {
  return [
    ...masks.writable.map((path) => ({ path, access: "writable" as const })),
    ...masks.readOnly.map((path) => ({ path, access: "readOnly" as const })),
    ...masks.hidden.dirs.map((path) => ({ path, access: "hidden" as const })),
  ];
}

/** What may be done at `path` (a real path): the deepest folder rule decides; hidden files always are. */
function accessAt(masks: ProtectedPaths, path: string): Access | undefined {
  if (masks.hidden.files.includes(path)) return "hidden";
  const matching = rulesOf(masks).filter((rule) => within(rule.path, path));
  // Stable: of rules on the same folder the first listed wins.
  return matching.sort((a, b) => b.path.length - a.path.length)[0]?.access;
}

/** The runtime's own configuration or secret files: refused to the file tools like a path outside. */
export class ProtectedPathError extends WorkspaceEscapeError {}

const HIDDEN = "is one of the runtime's own configuration or secret files";

/** Why `path` (a real path) may not be read, or undefined when it may. */
export function refusedRead(masks: ProtectedPaths, path: string): string | undefined {
  return accessAt(masks, path) === "hidden" ? HIDDEN : undefined;
}

/** Why `path` (a real path) may not be written, or undefined when it may. */
export function refusedWrite(masks: ProtectedPaths, path: string): string | undefined {
  const access = accessAt(masks, path);
  if (access === "hidden") return HIDDEN;
  return access === "readOnly" ? "is in the runtime's own folders, which commands may not change" : undefined;
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

const MOUNT_ORDER: Record<Access, number> = { hidden: 0, readOnly: 1, writable: 2 };

/**
 * `bwrap` arguments that run a command with the host's file system as it is, except: hidden
 * folders empty (read-only) and hidden files unreadable, the runtime's folders read-only, the
 * writable ones inside them bound back (each rule mounted on its parents' in order of depth, so
 * the runtime's folders inside a hidden one are seen again); in a PID namespace of its own (the
 * runtime's process, whose `/proc/<pid>/environ` holds its environment, is out of sight) and
 * without capabilities (a runtime run as root would otherwise let the command unmount the masks).
 * Only paths that exist are mounted on: bubblewrap would create a missing one on the host.
 */
export function bubblewrapArgs(cwd: string, masks: ProtectedPaths): string[] {
  const args = ["--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"];
  const depth = (path: string) => path.split(sep).length;
  const rules = rulesOf(masks)
    .filter((rule) => existsSync(rule.path))
    .sort((a, b) => depth(a.path) - depth(b.path) || MOUNT_ORDER[a.access] - MOUNT_ORDER[b.access]);
  const emptied: string[] = [];
  for (const { path, access } of rules) {
    if (access === "writable") args.push("--bind", path, path);
    else if (access === "readOnly") args.push("--ro-bind", path, path);
    else if (statSync(path).isDirectory()) {
      args.push("--tmpfs", path);
      emptied.push(path);
    } else args.push("--ro-bind", "/dev/null", path);
  }
  for (const file of masks.hidden.files) {
    if (existsSync(file) && !statSync(file).isDirectory()) args.push("--ro-bind", "/dev/null", file);
  }
  // Read-only once what is seen again inside them has its mount point.
  for (const dir of emptied) args.push("--remount-ro", dir);
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
