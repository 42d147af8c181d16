import type { Duplex, Readable, Writable } from "node:stream";

/** Limits a driver enforces where its platform lets it (the local driver reports what it could). */
export interface SandboxResources {
  cpuMillicores?: number;
  memoryMiB?: number;
  diskMiB?: number;
  maxProcesses?: number;
}

/** Limits a sandbox asked for that its driver accepts but does not enforce on this host, and why. */
export interface UnenforcedLimits {
  resources: (keyof SandboxResources)[];
  reason: string;
}

/** What a driver needs to run one sandbox; the same shape a Kubernetes Pod spec is built from. */
export interface SandboxRuntimeSpec {
  id: string;
  /** DNS label, used as hostname inside the sandbox. */
  slug: string;
  /** Owners, for labels on what a driver creates (Kubernetes objects). */
  orgId?: string;
  projectId?: string;
  /** Catalog name for the local driver, an OCI reference for Kubernetes. */
  image: string;
  /** Main process (argv); when absent the sandbox idles until stopped. */
  command?: string[];
  env: Record<string, string>;
  resources: SandboxResources;
  /**
   * A gzipped tar that replaces the workspace's content before the main process starts (a
   * rollback's workspace); only given to drivers with `restoresWorkspaceAtStart`.
   */
  workspaceArchive?: Uint8Array;
}

/** How a start is asked of a driver. */
export interface StartOptions {
  /** Settles once the start is admitted and counted; see `SandboxDriver.start`. */
  admitted?: Promise<void>;
}

/** A start begun before its admission was withdrawn: the start was refused, and nothing of it is left. */
export class StartWithdrawnError extends Error {
  override readonly name = "StartWithdrawnError";
  constructor(sandboxId: string) {
    super(`the start of sandbox ${sandboxId} was not admitted`);
  }
}

/**
 * A start's `workspaceArchive` was put into the workspace and did not go in (it did not unpack, or
 * the swap failed): the workspace was left as it was and the start failed. Told apart from other
 * start failures because a restore that ran and failed is not tried again (decision 0031).
 */
export class WorkspaceRestoreError extends Error {
  override readonly name = "WorkspaceRestoreError";
}

export type DriverPhase = "starting" | "running" | "stopped" | "failed";

export interface DriverStatus {
  /** An event with `starting` reports why a start is still waiting (unschedulable, image pull). */
  phase: DriverPhase;
  message?: string;
}

export interface ExecOptions {
  argv: string[];
  /** Absolute path inside the sandbox; the workspace when absent. */
  cwd?: string;
  env?: Record<string, string>;
  tty?: boolean;
  cols?: number;
  rows?: number;
}

export interface ExecExit {
  exitCode: number;
  signal?: string;
  /**
   * Whether processes the command started were still running when it exited (they may hold its
   * output open). False: its output ends for certain, however late it arrives. Undefined when the
   * driver cannot tell.
   */
  descendantsLeft?: boolean;
}

/** A process running inside a sandbox. With a TTY, stderr is merged into stdout (as with a terminal). */
export interface ExecProcess {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  resize(cols: number, rows: number): void;
  kill(signal?: NodeJS.Signals): void;
  readonly exited: Promise<ExecExit>;
}

/** Which of a sandbox's workspace snapshots stay when a new one is taken. */
export interface SnapshotRetention {
  /** The snapshots of this many newest revisions (the new one among them). */
  newest: number;
  /** And this revision's, whatever its age (the one a rollback is about to restore). */
  revision?: number;
}

export type DriverEvent = { sandboxId: string; status: DriverStatus };

/**
 * How the service runs sandboxes. Everything is asynchronous and addressed by sandbox id so a
 * driver backed by a remote scheduler (Kubernetes Pods: exec and port-forward over the API server's
 * streaming endpoints) implements it without changes.
 */
export interface SandboxDriver {
  readonly name: string;
  /**
   * Takes `workspaceArchive` in the start spec and unpacks it before the main process starts
   * (Kubernetes: an init step), throwing WorkspaceRestoreError when it does not go in. Without it,
   * the caller restores an archive over exec after the start.
   */
  readonly restoresWorkspaceAtStart?: boolean;
  /** Throws a 400 ProblemError when the image cannot be used by this driver. */
  validateImage(image: string): void;
  /** Throws a ProblemError when the driver cannot run sandboxes on this host. */
  checkAvailable(): void;
  /**
   * Resolves once the sandbox is running (its main process is up). With `admitted`, the start is
   * begun before the platform has decided it: the driver may build the sandbox meanwhile but runs
   * nothing of the spec's until `admitted` resolves; when it rejects, the driver undoes what it
   * built and the start rejects with StartWithdrawnError.
   */
  start(spec: SandboxRuntimeSpec, options?: StartOptions): Promise<void>;
  /**
   * Why a sandbox whose start resolved has failed since (the local driver's egress relay did not
   * come up), until its next start; undefined while it is fine. Drivers whose start resolves only
   * once everything is up omit it. The failure is also reported as an event.
   */
  failedAfterStart?(sandboxId: string): string | undefined;
  /**
   * Whether the workspace holds directories a restore interrupted by a kill left beside its content
   * (workspace-swap.ts), seen from outside the sandbox; the caller settles them over exec.
   */
  hasSwapLeftovers?(sandboxId: string): Promise<boolean>;
  /** Resolves once every process of the sandbox is gone; the workspace stays. */
  stop(sandboxId: string): Promise<void>;
  status(sandboxId: string): Promise<DriverStatus>;
  /** Unexpected exits (the main process ended, the sandbox was killed). */
  onEvent(listener: (event: DriverEvent) => void): () => void;
  exec(sandboxId: string, options: ExecOptions): Promise<ExecProcess>;
  /** A byte stream to a TCP port listening inside the sandbox. */
  portForward(sandboxId: string, port: number): Promise<Duplex>;
  /** Deletes the persistent workspace (sandbox deleted). */
  removeWorkspace(sandboxId: string): Promise<void>;
  /** What this host enforces, for logs and the operator. */
  describe(): Record<string, unknown>;
  /** Of `resources`, the limits this host would not enforce (none: undefined); drivers that enforce all omit it. */
  unenforcedLimits?(resources: SandboxResources): UnenforcedLimits | undefined;
  /**
   * Drivers whose sandboxes outlive the service (Kubernetes): removes those of sandboxes `exists`
   * does not know any more; returns their ids.
   */
  collectGarbage?(exists: (sandboxIds: string[]) => Promise<Set<string>>): Promise<string[]>;
  /**
   * Drivers with volume snapshots (Kubernetes with a VolumeSnapshotClass): snapshots the sandbox's
   * workspace for `revision` and returns the snapshot's name; undefined when it cannot (the caller
   * archives the workspace over exec instead). The sandbox's other snapshots are deleted but those
   * `keep` names.
   */
  snapshotWorkspace?(
    sandboxId: string,
    slug: string,
    revision: number,
    keep?: SnapshotRetention,
  ): Promise<string | undefined>;
  /** Replaces a stopped sandbox's workspace with the snapshot `ref` (a new volume from it). */
  restoreWorkspaceSnapshot?(sandboxId: string, slug: string, ref: string): Promise<void>;
  close(): Promise<void>;
}
