/**
 * A sandbox's environment crosses the host before it reaches the sandbox: bwrap, nsenter, `script`
 * and the shell that joins the cgroups start as the service's user (root, usually) on the host's
 * filesystem, and only then enter the namespaces. Variables that the host's dynamic loader, C
 * library or shell act on there (`LD_PRELOAD` naming a library the sandbox wrote into its own
 * workspace, `GCONV_PATH`, …) would run the sandbox's code on the host. Those never go into the
 * host processes' environment: they are exported inside, by the sandbox's own `sh`, right before
 * its command runs, so the command sees the same environment either way.
 */

/**
 * The variables glibc drops for setuid programs (its "unsecure" list), those sh acts on, and
 * libmount's (`mount` binds directories for a start: private-mounts.ts).
 */
const HOST_ACTED_ON =
  /^(?:LD_\w*|LIBMOUNT_\w*|GCONV_PATH|GETCONF_DIR|GLIBC_TUNABLES|HOSTALIASES|LOCALDOMAIN|LOCPATH|MALLOC_\w*|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TMPDIR|TZDIR|ENV|BASH_ENV|IFS|CDPATH|PS4|SHELLOPTS|BASHOPTS)$/;

/** Locale variables name locale files by path when they contain a slash. */
const LOCALE = /^(?:LANG|LANGUAGE|LC_\w+)$/;

export function actedOnByHost(name: string, value: string): boolean {
  return HOST_ACTED_ON.test(name) || (LOCALE.test(name) && value.includes("/"));
}

/** Exports each `NAME=value` argument up to `--`, then runs the rest. */
const EXPORT_THEN_EXEC = 'while [ "$1" != -- ]; do export "$1"; shift; done; shift; exec "$@"';

export interface SplitEnv {
  /** What the host processes that start the command may see. */
  host: Record<string, string>;
  /** The command, exporting the rest first (unchanged when there is nothing to export). */
  argv: string[];
}

/** Splits `env` for a command run inside a sandbox (see the module comment). */
export function splitSandboxEnv(env: Record<string, string>, argv: string[]): SplitEnv {
  const host: Record<string, string> = {};
  const inside: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (actedOnByHost(name, value)) inside.push(`${name}=${value}`);
    else host[name] = value;
  }
  if (inside.length === 0) return { host, argv };
  return { host, argv: ["/bin/sh", "-c", EXPORT_THEN_EXEC, "sh", ...inside, "--", ...argv] };
}
