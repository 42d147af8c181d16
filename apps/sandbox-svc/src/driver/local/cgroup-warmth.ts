import { closeSync, open, write } from "node:fs";
import { join } from "node:path";
import { type CgroupSupport, ownPaths } from "./cgroups.ts";

/**
 * Keeps the kernel's cgroup migration lock quick while a start or an exec moves processes.
 *
 * Every move into a cgroup takes a global lock (`cgroup_threadgroup_rwsem`). Where the kernel does
 * not favour such moves (cgroup v1, or v2 without `favordynmods`), the first writer after a quiet
 * spell waits for an RCU grace period, measured at 4–15 ms here, and the lock only stays quick
 * for about one more grace period after the last writer. A start moves bwrap, its child and the
 * command's process at moments ~5–10 ms apart, so each could wait again. While a start or an exec
 * holds this, the service's own process is written into the cgroup it is already in (a move that
 * moves nothing) every few milliseconds: the grace period is waited for once, beside the work
 * before the first move, and every move of the sandbox's processes then takes ~0.1 ms.
 *
 * Nothing is written while nothing holds it. Where the write is refused (a read-only cgroup file
 * system, a cgroup that takes no processes), it is not tried again.
 */
export class CgroupWarmth {
  private readonly procsFile: string | undefined;
  private readonly everyMs: number;
  private holds = 0;
  private fd: number | undefined;
  private writing = false;
  private timer: NodeJS.Timeout | undefined;
  private broken = false;

  constructor(procsFile: string | undefined, everyMs = 4) {
    this.procsFile = procsFile;
    this.everyMs = everyMs;
  }

  /**
   * Warm until `lingerMs` after the returned function is called (calling it again does nothing):
   * a start lingers so that the first exec, which moves its process in right after, finds it warm.
   */
  hold(lingerMs = 0): () => void {
    if (!this.procsFile || this.broken) return () => {};
    if (this.holds++ === 0) this.write();
    let released = false;
    const end = () => {
      if (--this.holds > 0) return;
      clearTimeout(this.timer);
      this.timer = undefined;
    };
    return () => {
      if (released) return;
      released = true;
      if (lingerMs > 0) setTimeout(end, lingerMs).unref();
      else end();
    };
  }

  /** Whether anything holds it now (tests). */
  get held(): boolean {
    return this.holds > 0;
  }

  /** Stops writing and closes the file (the driver is closing). */
  close(): void {
    this.broken = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    // A write in flight still uses the descriptor: it is closed when that write ends.
    if (!this.writing) this.closeFile();
  }

  private closeFile(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Writes once, then again `everyMs` after each write ends, while held. */
  private write(): void {
    if (this.writing || this.broken || this.holds === 0) return;
    this.writing = true;
    const done = (err: NodeJS.ErrnoException | null) => {
      this.writing = false;
      if (err) this.broken = true;
      if (this.broken) {
        this.closeFile();
        return;
      }
      if (this.holds > 0 && !this.timer) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.write();
        }, this.everyMs);
        this.timer.unref();
      }
    };
    // Each write(2) to cgroup.procs is one move request, so one descriptor serves them all.
    const pid = Buffer.from(`${process.pid}\n`);
    if (this.fd !== undefined) {
      write(this.fd, pid, (err) => done(err));
      return;
    }
    open(this.procsFile as string, "w", (err, fd) => {
      if (err) return done(err);
      this.fd = fd;
      write(fd, pid, (err) => done(err));
    });
  }
}

/** This process's own `cgroup.procs` in a hierarchy the driver uses, if it uses one. */
export function ownProcsFile(support: CgroupSupport, root = "/sys/fs/cgroup"): string | undefined {
  const own = ownPaths();
  if (support.version === "v2") {
    const path = own.get("(unified)");
    return path === undefined ? undefined : join(root, path, "cgroup.procs");
  }
  if (support.version !== "v1") return undefined;
  const controller = support.controllers[0];
  if (!controller) return undefined;
  const path = own.get(controller);
  return path === undefined ? undefined : join(root, controller, path, "cgroup.procs");
}
