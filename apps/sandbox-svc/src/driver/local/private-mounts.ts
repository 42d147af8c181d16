import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import type { SandboxPaths } from "./sandbox-args.ts";

/**
 * Where bwrap, started as the sandboxes' host user, finds directories that user cannot reach: a
 * data dir under a directory closed to others (`/root`, mode 0700, where a root dev container keeps
 * its repository) or such an image directory. Root starts that bwrap in a mount namespace of its
 * own (`unshare --mount`, propagation private, so nothing of it shows on the host), binds the
 * sandbox's workspace, run files and image root there onto mount points the user can reach, and
 * only then drops to the user. Nobody's data moves and no mode changes; every other process,
 * the sandbox's included (bwrap pivots away from that namespace's root), sees the host as before.
 *
 * The mount points are empty directories of root's (0711) under the service's temp directory, one
 * set per driver. Every start mounts on the same ones: each start's mounts are its own.
 */
export class PrivateMounts {
  private dir: string | undefined;
  private readonly tools: { unshare: string; mount: string };
  /** Whether the data dir's workspaces and run files need binding. */
  private readonly dataDirOutOfReach: boolean;
  /** Registered image roots that need binding. */
  private readonly imageRootsOutOfReach: ReadonlySet<string>;
  /** Where the mount point directory is made. */
  private readonly parent: string;
  /** What the binds are for, as the operator is told at start. */
  readonly reason: string;

  constructor(options: {
    tools: { unshare: string; mount: string };
    dataDir: string;
    /** The data dir and image roots out of the user's reach (`IdentityChoice`). */
    outOfReach: { dir: string; blocked: string }[];
    parent: string;
  }) {
    this.tools = options.tools;
    const dirs = new Set(options.outOfReach.map((o) => o.dir));
    this.dataDirOutOfReach = dirs.has(options.dataDir);
    this.imageRootsOutOfReach = dirs;
    this.parent = options.parent;
    const blocked = [...new Set(options.outOfReach.map((o) => o.blocked))].join(", ");
    this.reason = `the sandboxes' host user cannot search ${blocked}, on the way to ${[...dirs].join(", ")}: each start binds what its sandbox needs of it in a private mount namespace`;
  }

  /**
   * The paths bwrap binds from for a sandbox (`host` as they are on the host) and the binds that
   * make them so; no binds when every one is reachable as it is.
   */
  plan(host: SandboxPaths): { seen: SandboxPaths; binds: [string, string][] } {
    const binds: [string, string][] = [];
    const seen = { ...host };
    const imageOutOfReach = host.imageRoot !== undefined && this.imageRootsOutOfReach.has(host.imageRoot);
    if (!this.dataDirOutOfReach && !imageOutOfReach) return { seen, binds };
    const dir = this.mountPoints();
    const add = (source: string, name: string) => {
      const target = join(dir, name);
      binds.push([source, target]);
      return target;
    };
    if (this.dataDirOutOfReach) {
      seen.workspace = add(host.workspace, "workspace");
      seen.runDir = add(host.runDir, "run");
    }
    if (imageOutOfReach) seen.imageRoot = add(host.imageRoot as string, "image");
    return { seen, binds };
  }

  /** `argv` (the user's bwrap) started in a private mount namespace with `binds` made first. */
  wrap(binds: [string, string][], argv: string[]): string[] {
    if (binds.length === 0) return argv;
    return [
      this.tools.unshare,
      "--mount",
      "--propagation",
      "private",
      "--",
      "/bin/sh",
      "-c",
      BIND_THEN_EXEC,
      "sh",
      this.tools.mount,
      ...binds.flat(),
      "--",
      ...argv,
    ];
  }

  /**
   * The driver's mount point directory, made at first use and again when it is gone or no longer
   * root's alone (a temp directory cleaner removed it, and another user took its name), with its
   * mount points (made again when a cleaner removed them): a start never mounts on what another
   * user controls.
   */
  private mountPoints(): string {
    let dir = this.dir;
    if (!dir || !ownedByUsAlone(dir)) {
      dir = mkdtempSync(join(this.parent, "agentplane-sandbox-mounts-"));
      chmodSync(dir, 0o711);
      this.dir = dir;
    }
    for (const name of MOUNT_POINTS) {
      try {
        mkdirSync(join(dir, name), { mode: 0o711 });
      } catch (err) {
        // Made by an earlier start: no one else can make an entry in a directory of ours alone.
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    return dir;
  }

  /** Removes the mount points (empty directories: never a recursive removal). */
  close(): void {
    const dir = this.dir;
    this.dir = undefined;
    if (!dir) return;
    try {
      for (const name of MOUNT_POINTS) rmdirSync(join(dir, name));
      rmdirSync(dir);
    } catch {
      // Gone already, or not ours any more.
    }
  }
}

const MOUNT_POINTS = ["workspace", "run", "image"];

/**
 * Binds each source onto its target (`mount` given first, pairs up to `--`), then runs the rest.
 * `-n`: no line in the host's mount table files. The shell and `mount` run as root on the host, so
 * the variables they act on never reach them (host-env.ts).
 */
const BIND_THEN_EXEC =
  'm=$1; shift; while [ "$1" != -- ]; do "$m" -n --rbind "$1" "$2" || exit 125; shift 2; done; shift; exec "$@"';

function ownedByUsAlone(dir: string): boolean {
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}
