import { execFile } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import type { HostIdentity } from "./namespaces.ts";

/**
 * The host user sandboxes run as when the service is root: a uid no person or other service has,
 * so that nothing a sandbox leaves behind (a setuid file, a process) is anyone else's.
 */
export const DEFAULT_SANDBOX_HOST_UID = 65533;

const run = promisify(execFile);

/**
 * Whether `uid` (in group `uid`) may search every directory from the root down to `path`, as bwrap
 * needs to bind the workspace and the run files when it runs as that user. Directories not made yet
 * count as reachable: the driver makes them itself.
 */
export function unreachableDir(path: string, uid: number): string | undefined {
  const dirs: string[] = [];
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dir === dirname(dir)) break;
  }
  for (const dir of dirs) {
    let mode: number;
    let owner: number;
    let group: number;
    try {
      ({ mode, uid: owner, gid: group } = statSync(dir));
    } catch {
      return undefined;
    }
    const searchable = owner === uid ? mode & 0o100 : group === uid ? mode & 0o010 : mode & 0o001;
    if (!searchable) return dir;
  }
  return undefined;
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

export interface IdentityChoice {
  identity: HostIdentity;
  /** Why sandboxes run as root although a host user was asked for (a warning at start). */
  fallback?: string;
  /**
   * Directories of the sandboxes' host user (`dir`) that it cannot search its way to (`blocked` is
   * in the way): each start binds what it needs of them where the user reaches it (private-mounts.ts).
   */
  outOfReach?: { dir: string; blocked: string }[];
}

export interface IdentityInputs {
  /** The service holds CAP_SYS_ADMIN (root, as usual). */
  privileged: boolean;
  hostUid: number;
  dataDir: string;
  imageDirs: string[];
  /** util-linux unshare and mount are there to bind directories out of the user's reach. */
  canBind: boolean;
  /** Where the mount points for those binds go (the service's temp directory). */
  mountParent: string;
  readSysctl?: (path: string) => string | undefined;
}

/**
 * Whose host user sandboxes run as (see `HostIdentity`). Root runs them as `hostUid` unless it is
 * 0 or the kernel keeps users other than root from making user namespaces: then as root, with the
 * reason, so that the operator can change the setting. A data dir or image directory out of that
 * user's reach (under /root, say) is bound for its bwrap instead (`outOfReach`); only without the
 * tools for that do sandboxes run as root for it.
 */
export function chooseIdentity(inputs: IdentityInputs): IdentityChoice {
  const { hostUid } = inputs;
  const other = identityBesidesHostUser(inputs.privileged, hostUid, inputs.readSysctl);
  if (other) return other;
  const outOfReach = [inputs.dataDir, ...inputs.imageDirs].flatMap((dir) => {
    const blocked = unreachableDir(dir, hostUid);
    return blocked ? [{ dir, blocked }] : [];
  });
  const [first] = outOfReach;
  if (!first) return { identity: { kind: "uid", uid: hostUid } };
  const noBind = !inputs.canBind
    ? "and util-linux unshare and mount, which would bind it where that user can, are missing"
    : unreachableDir(inputs.mountParent, hostUid) &&
      `and cannot search the temp directory ${inputs.mountParent} either, where it would be bound`;
  if (noBind) {
    return {
      identity: { kind: "root" },
      fallback: `sandboxes run as the service's root user: uid ${hostUid} (SANDBOX_HOST_UID) cannot search ${first.blocked}, on the way to ${first.dir}, ${noBind}`,
    };
  }
  return { identity: { kind: "uid", uid: hostUid }, outOfReach };
}

/**
 * The identity sandboxes have whatever their directories, when it is not `hostUid`'s: the
 * service's own user (not root), root (asked for, or user namespaces closed to other users).
 */
export function identityBesidesHostUser(
  privileged: boolean,
  hostUid: number,
  readSysctl: (path: string) => string | undefined = readProc,
): IdentityChoice | undefined {
  if (!privileged) return { identity: { kind: "self" } };
  if (hostUid === 0) return { identity: { kind: "root" } };
  // bwrap run by another user makes the user namespace itself, which these settings forbid.
  const closed = [
    ["/proc/sys/kernel/unprivileged_userns_clone", "kernel.unprivileged_userns_clone"],
    ["/proc/sys/user/max_user_namespaces", "user.max_user_namespaces"],
  ].find(([path]) => readSysctl(path as string)?.trim() === "0");
  if (closed) {
    return {
      identity: { kind: "root" },
      fallback: `sandboxes run as the service's root user: ${closed[1]} is 0, so uid ${hostUid} (SANDBOX_HOST_UID) cannot make their user namespaces`,
    };
  }
  return undefined;
}

/**
 * Makes the data dir's shared directories `workspaces` and `run` ready. Sandboxes of the service's
 * own user (root or not) write files that are that user's, a setuid copy of a shell for one: the
 * directories are open to the service's user only. Sandboxes of their own host user need to search
 * them (each workspace is then that user's alone, and its name unknown to others).
 */
export function prepareDataDirs(dataDir: string, identity: HostIdentity): void {
  const mode = identity.kind === "uid" ? 0o711 : 0o700;
  for (const name of ["workspaces", "run"]) {
    const dir = join(dataDir, name);
    mkdirSync(dir, { recursive: true, mode });
    if ((statSync(dir).mode & 0o777) !== mode) chmodSync(dir, mode);
  }
}

/**
 * Makes `workspace` (made if missing) the sandbox host user's, with what is in it when it was
 * another's (made before sandboxes had a user of their own). Synchronous but for that takeover.
 */
export async function ownWorkspace(workspace: string, identity: HostIdentity): Promise<void> {
  const made = mkdirSync(workspace, { recursive: true, mode: 0o700 }) !== undefined;
  if (identity.kind !== "uid") return;
  const { uid } = identity;
  if (made) return chownSync(workspace, uid, uid);
  const stat = statSync(workspace);
  if (stat.uid === uid && stat.gid === uid) return;
  // -R never follows symbolic links (-P is its default): a link the sandbox made stays a link.
  await run("chown", ["-R", `${uid}:${uid}`, workspace]);
  chmodSync(workspace, 0o700);
}
