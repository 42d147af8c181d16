import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxResources, UnenforcedLimits } from "../types.ts";

type Controller = "memory" | "pids" | "cpu";

/** Where this host lets the service put sandboxes into cgroups, detected once at start. */
export interface CgroupSupport {
  version: "v2" | "v1" | "none";
  /** Controllers that could be set up (a parent directory we can create children in). */
  controllers: Controller[];
  reason?: string;
  /** controller → parent directory of the per-sandbox cgroups. */
  parents: Partial<Record<Controller, string>>;
}

const PARENT_NAME = "agentplane-sandboxes";

/** This process's cgroup path per controller (`(unified)` for cgroup v2), from /proc/self/cgroup. */
export function ownPaths(): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const [, controllers, path] = line.split(":");
    if (controllers === undefined || path === undefined) continue;
    for (const c of controllers === "" ? ["(unified)"] : controllers.split(",")) paths.set(c, path);
  }
  return paths;
}

/** The parent exists (made now, or left by an earlier start) and this process may make children in it. */
function tryMkdir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true });
    // One made by another user (root's earlier start) exists but refuses our sandboxes' cgroups.
    accessSync(dir, constants.W_OK);
    return existsSync(join(dir, "cgroup.procs"));
  } catch {
    return false;
  }
}

/**
 * Pure cgroup v2: a child of the root cgroup (the root is exempt from "no internal processes")
 * with memory/pids/cpu enabled. cgroup v1 (hybrid hosts): a child of our own cgroup under each
 * controller hierarchy, so limits nest inside whatever the host already imposes on us.
 */
export function detectCgroups(root = "/sys/fs/cgroup"): CgroupSupport {
  try {
    if (existsSync(join(root, "cgroup.controllers"))) {
      const parent = join(root, PARENT_NAME);
      const available = readFileSync(join(root, "cgroup.controllers"), "utf8").trim().split(/\s+/);
      const wanted = (["memory", "pids", "cpu"] as const).filter((c) => available.includes(c));
      if (!tryMkdir(parent)) return { version: "none", controllers: [], parents: {}, reason: `${root} not writable` };
      const enabled: Controller[] = [];
      for (const c of wanted) {
        try {
          writeFileSync(join(root, "cgroup.subtree_control"), `+${c}`);
          writeFileSync(join(parent, "cgroup.subtree_control"), `+${c}`);
          enabled.push(c);
        } catch {
          // Controller not delegable here; the others may still work.
        }
      }
      const parents = Object.fromEntries(enabled.map((c) => [c, parent]));
      return { version: "v2", controllers: enabled, parents };
    }
    const own = ownPaths();
    const parents: Partial<Record<Controller, string>> = {};
    for (const c of ["memory", "pids", "cpu"] as const) {
      const mount = join(root, c);
      if (!existsSync(join(mount, "cgroup.procs"))) continue;
      const dir = join(mount, own.get(c) ?? "/", PARENT_NAME);
      if (tryMkdir(dir)) parents[c] = dir;
    }
    const controllers = Object.keys(parents) as Controller[];
    if (controllers.length === 0)
      return { version: "none", controllers, parents, reason: "no writable cgroup hierarchy" };
    return { version: "v1", controllers, parents };
  } catch (err) {
    return { version: "none", controllers: [], parents: {}, reason: (err as Error).message };
  }
}

const CONTROLLER_OF = { cpuMillicores: "cpu", memoryMiB: "memory", maxProcesses: "pids" } as const;

/**
 * Of `resources`, what the local driver accepts but will not enforce: cpu, memory and pids limits
 * whose cgroup controller this host does not let it use, and `diskMiB` always.
 */
export function unenforcedLimits(support: CgroupSupport, resources: SandboxResources): UnenforcedLimits | undefined {
  const uncontrolled = (Object.keys(CONTROLLER_OF) as (keyof typeof CONTROLLER_OF)[]).filter(
    (key) => resources[key] !== undefined && !support.controllers.includes(CONTROLLER_OF[key]),
  );
  const reasons: string[] = [];
  if (uncontrolled.length > 0) {
    reasons.push(
      support.reason
        ? `cgroups unavailable on this host (${support.reason})`
        : `cgroup controllers not available on this host: ${uncontrolled.map((k) => CONTROLLER_OF[k]).join(", ")}`,
    );
  }
  const disk = resources.diskMiB !== undefined;
  if (disk) reasons.push("the local driver does not limit disk");
  if (reasons.length === 0) return undefined;
  const requested = (["cpuMillicores", "memoryMiB", "diskMiB", "maxProcesses"] as const).filter(
    (key) => (key === "diskMiB" && disk) || (uncontrolled as string[]).includes(key),
  );
  return { resources: requested, reason: reasons.join("; ") };
}

/** One sandbox's cgroups: `procsFiles` are written with a process id to move it in. */
export interface SandboxCgroup {
  procsFiles: string[];
  enforced: string[];
  /** Moves running processes (each of `pids`) in, into every one of its cgroups (`ProcsFiles`). */
  move(pids: number[]): Promise<void>;
  remove(): Promise<void>;
}

function write(dir: string, file: string, value: string): boolean {
  try {
    writeFileSync(join(dir, file), value);
    return true;
  } catch {
    return false;
  }
}

/**
 * What a sandbox that sets no memory or process limit is held to, as the Kubernetes driver holds
 * one to its defaults: without them one fork bomb or allocation takes the whole host down.
 */
export const DEFAULT_LIMITS = { memoryMiB: 2048, maxProcesses: 1024 } as const;

export function createSandboxCgroup(support: CgroupSupport, id: string, requested: SandboxResources): SandboxCgroup {
  const resources: SandboxResources = { ...DEFAULT_LIMITS, ...requested };
  const dirs = new Set<string>();
  const enforced: string[] = [];
  const dirFor = (c: Controller): string | undefined => {
    const parent = support.parents[c];
    if (!parent) return undefined;
    const dir = join(parent, id);
    mkdirSync(dir, { recursive: true });
    dirs.add(dir);
    return dir;
  };
  const v2 = support.version === "v2";
  if (resources.memoryMiB) {
    const dir = dirFor("memory");
    const bytes = String(resources.memoryMiB * 1024 * 1024);
    if (dir && (v2 ? write(dir, "memory.max", bytes) : write(dir, "memory.limit_in_bytes", bytes))) {
      if (v2) write(dir, "memory.swap.max", "0");
      enforced.push("memory");
    }
  }
  if (resources.maxProcesses) {
    const dir = dirFor("pids");
    if (dir && write(dir, "pids.max", String(resources.maxProcesses))) enforced.push("pids");
  }
  if (resources.cpuMillicores) {
    const dir = dirFor("cpu");
    const quota = String(resources.cpuMillicores * 100);
    const ok = dir && (v2 ? write(dir, "cpu.max", `${quota} 100000`) : write(dir, "cpu.cfs_quota_us", quota));
    if (ok) enforced.push("cpu");
  }
  // One removal per cgroup, shared by every caller: the main process's exit and stop() both ask for
  // it, and a restart must not create the same directories while a retry loop of the first
  // removal is still running (it would delete the new, still empty, cgroup before the sandbox's
  // first process moves in).
  let removal: Promise<void> | undefined;
  const procsFiles = [...dirs].map((d) => join(d, "cgroup.procs"));
  const files = new ProcsFiles(procsFiles);
  return {
    procsFiles,
    enforced,
    move: (pids) => (removal ? Promise.reject(new Error("the sandbox's cgroups are removed")) : files.move(pids)),
    remove() {
      removal ??= files.close().then(() => removeDirs([...dirs]));
      return removal;
    },
  };
}

async function removeDirs(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    // The kernel refuses while the last processes are still being reaped; retry briefly.
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        if (existsSync(dir)) rmdirSync(dir);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
}

/**
 * A sandbox's `cgroup.procs` files, moving running processes in off the event loop. On cgroup v1,
 * and v2 without `favordynmods`, a move after a quiet spell waits for an RCU grace period in the
 * kernel (~10 ms), and moves that follow within one are quick: the driver therefore starts bwrap
 * at once and moves its processes while it builds the sandbox. The files are opened at the first
 * move and kept open until the cgroups are removed; each write(2) is one move request, so a move
 * is one write per file, all files at once: one trip to the thread pool, not an open, a write and
 * a close per file in turn, each waiting for the event loop (which, on the embedded database, may
 * be running a statement meanwhile).
 */
class ProcsFiles {
  private readonly paths: string[];
  private handles: Promise<FileHandle[]> | undefined;
  /** Moves under way: the files are closed only once they ended. */
  private readonly moving = new Set<Promise<unknown>>();

  constructor(paths: string[]) {
    this.paths = paths;
  }

  async move(pids: number[]): Promise<void> {
    if (this.paths.length === 0 || pids.length === 0) return;
    this.handles ??= openAll(this.paths);
    const moved = this.handles.then((handles) =>
      Promise.all(
        handles.map(async (handle) => {
          for (const pid of pids) await handle.write(String(pid));
        }),
      ),
    );
    this.moving.add(moved);
    try {
      await moved;
    } finally {
      this.moving.delete(moved);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.moving]);
    const handles = await this.handles?.catch(() => [] as FileHandle[]);
    this.handles = undefined;
    await Promise.all((handles ?? []).map((h) => h.close().catch(() => {})));
  }
}

/** Every one of `paths` opened for writing, or none (those opened are closed again). */
async function openAll(paths: string[]): Promise<FileHandle[]> {
  const opened = await Promise.allSettled(paths.map((path) => open(path, "w")));
  const failed = opened.find((o) => o.status === "rejected");
  if (!failed) return opened.map((o) => (o as PromiseFulfilledResult<FileHandle>).value);
  await Promise.all(opened.map((o) => (o.status === "fulfilled" ? o.value.close().catch(() => {}) : undefined)));
  throw failed.reason;
}
