import { readFileSync } from "node:fs";

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
 * sandbox's user with no capabilities, exactly as when root enters.
 */
export interface NamespaceTools {
  nsenter: string;
  /** util-linux unshare; needed only when the driver does not run as root. */
  unshare?: string | undefined;
}

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

/** bwrap's command line as the driver runs it: as is for root, else inside a user namespace of its own. */
export function bwrapLauncher(tools: NamespaceTools, bwrap: string, privileged: boolean): string[] {
  if (privileged) return [bwrap];
  return [tools.unshare as string, "--user", "--map-root-user", "--", bwrap];
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
export function enterArgv(tools: NamespaceTools, target: SandboxProcesses, which: "all" | "net", privileged: boolean) {
  const pid = String(target.pid);
  if (privileged) {
    return which === "all"
      ? [tools.nsenter, "-t", pid, "--all", "--preserve-credentials", "-w"]
      : [tools.nsenter, "-t", pid, "-n"];
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
