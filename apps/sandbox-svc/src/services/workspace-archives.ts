import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { PREVIOUS_PREFIX, RECOVER_SCRIPT, RESTORE_PREFIX, SWAP_SCRIPT } from "../driver/workspace-swap.ts";
import { capture, MESSAGE_OUTPUT_CAP } from "../exec/run-command.ts";
import type { SandboxDeps } from "./context.ts";

/** A workspace larger than this (gzipped) is not archived (it is held in memory while read); the revision says so. */
export const MAX_ARCHIVE_BYTES = 64 * 1024 * 1024;

/**
 * Archives kept per sandbox, of each method: the newest revisions' (and the one a rollback is
 * restoring); older ones are deleted as new ones are taken, volume snapshots by the driver too.
 */
export const KEPT_ARCHIVES = 5;

export interface ArchiveSummary {
  method: "tar" | "volume-snapshot";
  sizeBytes: number;
}

/** Deletes a sandbox's archives of `method` but the KEPT_ARCHIVES newest and `spare`'s. */
async function pruneArchives(
  deps: SandboxDeps,
  sandboxId: string,
  method: ArchiveSummary["method"],
  spare: number | undefined,
): Promise<void> {
  const kept = deps.db
    .selectFrom("workspace_archives")
    .select("revision")
    .where("sandbox_id", "=", sandboxId)
    .where("method", "=", method)
    .orderBy("revision", "desc")
    .limit(KEPT_ARCHIVES);
  await deps.db
    .deleteFrom("workspace_archives")
    .where("sandbox_id", "=", sandboxId)
    .where("method", "=", method)
    .where("revision", "not in", kept)
    .$if(spare !== undefined, (q) => q.where("revision", "!=", spare as number))
    .execute();
}

/**
 * How long archiving a workspace may take: the sandbox's own tar does it, and one that never ends
 * would hold the change it accompanies (a revision's restart) for good.
 */
const ARCHIVE_TIMEOUT_MS = 5 * 60_000;

/** How long after its exit an exec's output may take to end before it counts as cut short. */
const OUTPUT_DRAIN_MS = 10_000;

/** Resolves true once `stream` has ended, false when it closes or fails without ending. */
function ended(stream: Readable): Promise<boolean> {
  return new Promise((resolve) => {
    stream.once("end", () => resolve(true));
    stream.once("close", () => resolve(stream.readableEnded));
    stream.once("error", () => resolve(false));
  });
}

/** `done`'s answer, or false when it takes longer than `ms`. */
async function within(done: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Archives a running sandbox's workspace for `revision` (the one it is leaving): a gzipped tar
 * stream over the driver's exec, so it works the same on every driver (on Kubernetes, `pods/exec`),
 * kept in the service's database. Never fails the change it accompanies: a workspace that cannot
 * be read, or is larger than MAX_ARCHIVE_BYTES, is logged and left without an archive.
 */
export async function archiveWorkspace(
  deps: SandboxDeps,
  sandboxId: string,
  revision: number,
  /** A revision whose archive stays whatever its age (the one a rollback is about to restore). */
  spare?: number,
): Promise<ArchiveSummary | undefined> {
  try {
    // The exec's working directory is the workspace on every driver.
    const proc = await deps.driver.exec(sandboxId, { argv: ["tar", "-czf", "-", "."] });
    proc.stdin.end();
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    proc.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ARCHIVE_BYTES) {
        tooLarge = true;
        proc.kill("SIGKILL");
        return;
      }
      chunks.push(chunk);
    });
    // The sandbox's own tar: what it says is kept only as far as the log line shows it.
    const stderr = capture(proc.stderr, MESSAGE_OUTPUT_CAP);
    const whole = ended(proc.stdout);
    const timeoutMs = deps.config?.archiveTimeoutMs ?? ARCHIVE_TIMEOUT_MS;
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      proc.kill("SIGKILL");
    }, timeoutMs);
    const exit = await proc.exited.finally(() => clearTimeout(deadline));
    if (timedOut) {
      deps.logger.warn(
        { sandboxId, revision },
        `workspace archive took longer than ${timeoutMs / 1000} s: not archived`,
      );
      return undefined;
    }
    // The exit can be told before the last of the output has been read (the local driver learns
    // of it over another channel): taken at the exit, an archive was seen empty under load.
    const complete = await within(whole, OUTPUT_DRAIN_MS);
    if (tooLarge) {
      deps.logger.warn({ sandboxId, revision }, `workspace larger than ${MAX_ARCHIVE_BYTES} bytes: not archived`);
      return undefined;
    }
    if (exit.exitCode !== 0) {
      deps.logger.warn(
        { sandboxId, revision, exitCode: exit.exitCode, stderr: stderr.result().text.slice(0, 500) },
        "workspace archive failed",
      );
      return undefined;
    }
    const data = Buffer.concat(chunks);
    if (!complete || data.length === 0) {
      proc.stdout.destroy();
      deps.logger.warn({ sandboxId, revision, bytes: data.length }, "workspace archive incomplete: not archived");
      return undefined;
    }
    await deps.db
      .insertInto("workspace_archives")
      .values({ sandbox_id: sandboxId, revision, method: "tar", size_bytes: data.length, data } as never)
      .onConflict((oc) =>
        oc.columns(["sandbox_id", "revision"]).doUpdateSet({ data, size_bytes: data.length } as never),
      )
      .execute();
    await pruneArchives(deps, sandboxId, "tar", spare);
    return { method: "tar", sizeBytes: data.length };
  } catch (err) {
    deps.logger.warn({ err, sandboxId, revision }, "workspace archive failed");
    return undefined;
  }
}

/**
 * Keeps the workspace of `revision` (the one a running sandbox is leaving): a volume snapshot
 * where the driver can take one (Kubernetes with a VolumeSnapshotClass), else a tar archive.
 */
export async function keepWorkspace(
  deps: SandboxDeps,
  row: { id: string; slug: string },
  revision: number,
  /** A revision whose archive stays whatever its age (the one a rollback is about to restore). */
  spare?: number,
): Promise<ArchiveSummary | undefined> {
  const keep = { newest: KEPT_ARCHIVES, ...(spare !== undefined ? { revision: spare } : {}) };
  const ref = await deps.driver.snapshotWorkspace?.(row.id, row.slug, revision, keep).catch((err: Error) => {
    deps.logger.warn({ err, sandboxId: row.id, revision }, "workspace snapshot failed; archiving over exec");
    return undefined;
  });
  if (!ref) return archiveWorkspace(deps, row.id, revision, spare);
  await deps.db
    .insertInto("workspace_archives")
    .values({
      sandbox_id: row.id,
      revision,
      method: "volume-snapshot",
      ref,
      size_bytes: 0,
      data: new Uint8Array(),
    } as never)
    .onConflict((oc) => oc.columns(["sandbox_id", "revision"]).doUpdateSet({ method: "volume-snapshot", ref } as never))
    .execute();
  // The driver deleted the older snapshots by the same rule.
  await pruneArchives(deps, row.id, "volume-snapshot", spare);
  return { method: "volume-snapshot", sizeBytes: 0 };
}

/**
 * Before a rollback's start: a stopped sandbox's workspace replaced by `revision`'s volume snapshot
 * (a new volume from it). Returns false when that revision has none (a tar archive is restored by
 * the next start instead: `restore_revision`, see bootSandbox).
 */
export async function restoreSnapshotBeforeStart(
  deps: SandboxDeps,
  row: { id: string; slug: string },
  revision: number,
): Promise<boolean> {
  const archive = await deps.db
    .selectFrom("workspace_archives")
    .select(["method", "ref"])
    .where("sandbox_id", "=", row.id)
    .where("revision", "=", revision)
    .executeTakeFirst();
  if (archive?.method !== "volume-snapshot" || !archive.ref || !deps.driver.restoreWorkspaceSnapshot) return false;
  await deps.driver.restoreWorkspaceSnapshot(row.id, row.slug, archive.ref);
  return true;
}

/** How `revision`'s workspace was kept, if it was. */
export async function archiveMethod(
  deps: SandboxDeps,
  sandboxId: string,
  revision: number,
): Promise<ArchiveSummary["method"] | undefined> {
  const archive = await deps.db
    .selectFrom("workspace_archives")
    .select("method")
    .where("sandbox_id", "=", sandboxId)
    .where("revision", "=", revision)
    .executeTakeFirst();
  return archive?.method as ArchiveSummary["method"] | undefined;
}

/** The tar archive of `revision`, if there is one. */
export async function tarArchive(
  deps: SandboxDeps,
  sandboxId: string,
  revision: number,
): Promise<Uint8Array | undefined> {
  const archive = await deps.db
    .selectFrom("workspace_archives")
    .select(["data"])
    .where("sandbox_id", "=", sandboxId)
    .where("revision", "=", revision)
    .where("method", "=", "tar")
    .executeTakeFirst();
  return archive?.data;
}

/**
 * Puts a tar archive into a sandbox that runs already (drivers that cannot restore before the main
 * process starts): everything in the workspace is replaced by the archive's content, or, when that
 * fails, left as it was and the error thrown.
 */
export async function restoreIntoRunning(deps: SandboxDeps, sandboxId: string, data: Uint8Array): Promise<void> {
  const id = randomBytes(6).toString("hex");
  await runInWorkspace(
    deps,
    sandboxId,
    ["sh", "-c", SWAP_SCRIPT, "sh", `${RESTORE_PREFIX}${id}`, `${PREVIOUS_PREFIX}${id}`],
    data,
  );
}

/**
 * Puts back what a restore interrupted by a kill left in a running sandbox's workspace (see
 * workspace-swap.ts): the workspace as it was before that restore, or as it made it when its
 * swap was complete. Throws when that fails (what was left stays, holding the content).
 */
export async function settleInterruptedRestore(deps: SandboxDeps, sandboxId: string): Promise<void> {
  await runInWorkspace(deps, sandboxId, ["sh", "-c", RECOVER_SCRIPT]);
}

/** Runs `argv` in the workspace with `stdin`; throws with its exit and what it said when it fails. */
async function runInWorkspace(deps: SandboxDeps, sandboxId: string, argv: string[], stdin?: Uint8Array): Promise<void> {
  const proc = await deps.driver.exec(sandboxId, { argv });
  const stderr = capture(proc.stderr, MESSAGE_OUTPUT_CAP);
  const stderrEnded = ended(proc.stderr);
  proc.stdout.resume();
  proc.stdin.end(stdin ? Buffer.from(stdin) : undefined);
  const exit = await proc.exited;
  if (exit.exitCode !== 0) {
    // What it said may still be on its way (see archiveWorkspace).
    await within(stderrEnded, 1000);
    const message = stderr.result().text.trim().slice(0, 500);
    throw new Error(`exit ${exit.exitCode}${message ? `: ${message}` : ""}`);
  }
}

/** What each revision's archive is, for the revision list. */
export async function archivesOf(deps: SandboxDeps, sandboxId: string): Promise<Map<number, ArchiveSummary>> {
  const rows = await deps.db
    .selectFrom("workspace_archives")
    .select(["revision", "method", "size_bytes"])
    .where("sandbox_id", "=", sandboxId)
    .execute();
  return new Map(
    rows.map((r) => [r.revision, { method: r.method as ArchiveSummary["method"], sizeBytes: Number(r.size_bytes) }]),
  );
}
