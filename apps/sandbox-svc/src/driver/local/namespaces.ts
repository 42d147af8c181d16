import { readFileSync, realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { SANDBOX_UID } from "./sandbox-args.ts";
import type { SpawnUser } from "./spawner.ts";

/**
 * How the driver starts bwrap and enters a sandbox's namespaces, as root or as any other user.
 *
 * bwrap (not setuid) makes two user namespaces: an outer one that owns the sandbox's mount,
 * network, pid, ipc, uts and cgroup namespaces, and a nested one its processes run in (the
 * sandbox's uid; with --disable-userns, no further ones). Root enters them all at once. Any other
 * user (or root without CAP_SYS_ADMIN, as in a container) has no capability over the outer namespace, so nsenter is refused (EPERM) and nothing
 * could run in a sandbox. Run as another user, bwrap therefore starts inside a user namespace of
 * the driver's own (`unshare --user --map-root-user`), which its outer bwrap process keeps: a
 * first nsenter joins that namespace, where the driver's user is root over the sandbox's
 * namespaces, and a second one enters them, its user namespace last, so the command runs as the
 * sandbox's user with no capabilities, exactly as when root enters. Root itself starts bwrap as
 * the sandboxes' own host user (`HostIdentity`), unless told to map them to root.
 */
export interface NamespaceTools {
  nsenter: string;
  /** util-linux unshare; needed only when the driver does not run as root. */
  unshare?: string | undefined;
  /** util-linux setpriv; needed only when root starts sandboxes as another user. */
  setpriv?: string | undefined;
}

/**
 * Whose host user a sandbox's processes are (their uid 1000 inside maps to it):
 * - `uid`: the service is root and starts bwrap as an unprivileged host user of its own
 *   (`SANDBOX_HOST_UID`), so what a sandbox writes or runs belongs to that user, never to root;
 *   root still enters the sandbox's namespaces directly and becomes its user inside.
 * - `root`: the service is root and bwrap maps the sandbox's user to root itself, without
 *   capabilities (`SANDBOX_HOST_UID=0`, or user namespaces closed to other users).
 * - `self`: the service is another user, whom its sandboxes' user maps to.
 */
export type HostIdentity = { kind: "uid"; uid: number } | { kind: "root" } | { kind: "self" };

/** CAP_SYS_ADMIN's bit in /proc's capability masks. */
const CAP_SYS_ADMIN = 21n;

/**
 * Whether this process holds CAP_SYS_ADMIN (root, as usual, but not root in a container that
 * dropped it): then it joins every sandbox namespace directly; else through a user namespace of
 * its own.
 */
export function holdsSysAdmin(status = readFileSync("/proc/self/status", "utf8")): boolean {
  const match = /^CapEff:\s*([0-9a-f]+)$/m.exec(status);
  return match !== null && ((BigInt(`0x${match[1]}`) >> CAP_SYS_ADMIN) & 1n) === 1n;
}

/** How bwrap is started: its command line, and the host user its spawn switches to, if any. */
export interface BwrapLaunch {
  argv: string[];
  user?: SpawnUser;
}

/**
 * bwrap's command line as the driver runs it: as the sandboxes' host user (root's choice), as is
 * (root), else inside a user namespace of the driver's own. Root's spawn switches to the host user
 * itself (`user`) when given `runnableByAnyone` (bwrap's real path, that user can run it from
 * there): that spares each start the run of setpriv (its locale and user database lookups, ~4 ms).
 * setpriv stays where something runs as root between the spawn and bwrap (private-mounts.ts binds
 * directories first: `viaSetpriv`), or where only root reaches bwrap (setpriv execs it still
 * holding root's capabilities).
 */
export function bwrapLauncher(
  tools: NamespaceTools,
  bwrap: string,
  identity: HostIdentity,
  options: { runnableByAnyone?: string | undefined; viaSetpriv?: boolean } = {},
): BwrapLaunch {
  if (identity.kind === "uid") {
    if (options.runnableByAnyone && !options.viaSetpriv) {
      return { argv: [options.runnableByAnyone], user: { uid: identity.uid, gid: identity.uid } };
    }
    const id = String(identity.uid);
    return { argv: [tools.setpriv as string, `--reuid=${id}`, `--regid=${id}`, "--clear-groups", "--", bwrap] };
  }
  if (identity.kind === "root") return { argv: [bwrap] };
  return { argv: [tools.unshare as string, "--user", "--map-root-user", "--", bwrap] };
}

/**
 * `program`'s real path when any user may run it from there (it and every directory above it
 * open to others), else undefined: a tool found in a directory of root's alone (0700).
 */
export function runnableByAnyone(program: string | undefined): string | undefined {
  if (!program) return undefined;
  try {
    const real = realpathSync(program);
    if ((statSync(real).mode & 0o001) === 0) return undefined;
    for (let dir = dirname(real); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return undefined;
      if (dir === dirname(dir)) return real;
    }
  } catch {
    return undefined;
  }
}

/** Where the sandbox's namespaces are entered from: its first process, and the bwrap that holds them. */
export interface SandboxProcesses {
  /** Host pid of the sandbox's first process (inside its namespaces). */
  pid: number;
  /** Host pid of the bwrap outside them, whose user namespace a non-root driver joins first. */
  holder: number;
}

/**
 * The nsenter prefix (up to, not including, the `--` before the command) that runs a command in
 * every namespace of the sandbox (`all`, in its working directory) or only its network (`net`).
 */
export function enterArgv(
  tools: NamespaceTools,
  target: SandboxProcesses,
  which: "all" | "net",
  identity: HostIdentity,
): string[] {
  const pid = String(target.pid);
  if (identity.kind !== "self") {
    if (which === "net") return [tools.nsenter, "-t", pid, "-n"];
    // Root holds every capability over the sandbox's namespaces. Entering its user namespace, it
    // either keeps its own credentials (the sandbox's user is root's there) or takes the sandbox's
    // user, which is the host user bwrap ran as; nsenter drops root's supplementary groups then.
    return identity.kind === "root"
      ? [tools.nsenter, "-t", pid, "--all", "--preserve-credentials", "-w"]
      : [tools.nsenter, "-t", pid, "--all", `--setuid=${SANDBOX_UID}`, `--setgid=${SANDBOX_UID}`, "-w"];
  }
  // Not --all: that includes the time namespace, which is the host's and not ours to join.
  const namespaces = which === "all" ? ["-m", "-u", "-i", "-n", "-p", "-C", "-w"] : ["-n"];
  return [
    tools.nsenter,
    "-t",
    String(target.holder),
    "-U",
    "--preserve-credentials",
    "--",
    tools.nsenter,
    "-t",
    pid,
    "-U",
    ...namespaces,
    "--preserve-credentials",
  ];
}

/** The parent pid of a process, from /proc (the bwrap outside the sandbox, for its first process). */
export function parentPid(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^PPid:\s*(\d+)$/m.exec(status);
  if (!match) throw new Error(`no parent pid in /proc/${pid}/status`);
  return Number(match[1]);
}
