import type { Generated } from "kysely";

export interface SandboxTable {
  id: string;
  project_id: string;
  org_id: string | null;
  name: string;
  slug: string;
  image: string;
  /** JSON: string | string[] | null. */
  command: unknown;
  env: Record<string, string>;
  resources: Record<string, number>;
  ports: { port: number; visibility: "private" | "public" }[];
  idle_timeout_seconds: number;
  labels: Record<string, string>;
  state: string;
  current_revision: number;
  last_error: string | null;
  /** The token minted for the sandbox's own environment (AGENTPLANE_TOKEN). */
  platform_token_id: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  last_activity_at: Date | null;
  /**
   * A rollback to a revision with a tar archive: that revision, whose workspace the next start puts
   * back (before the main process on drivers that can, else right after); cleared by that start.
   */
  restore_revision: number | null;
}

export interface RevisionTable {
  sandbox_id: string;
  revision: number;
  spec: unknown;
  author_type: string;
  author_id: string;
  /** The author's display name when written (null for revisions written before it was kept). */
  author_name: string | null;
  reason: string | null;
  created_at: Generated<Date>;
}

export interface WorkspaceArchiveTable {
  sandbox_id: string;
  revision: number;
  /** `tar` (a gzipped tar stream over exec, in `data`) or `volume-snapshot` (named `ref`). */
  method: string;
  ref: string | null;
  size_bytes: number;
  data: Uint8Array;
  created_at: Generated<Date>;
}

export interface SandboxTokenTable {
  id: string;
  project_id: string;
  org_id: string | null;
  sandbox_id: string;
  name: string;
  secret_hash: string;
  created_by: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface SandboxDB {
  sandboxes: SandboxTable;
  revisions: RevisionTable;
  workspace_archives: WorkspaceArchiveTable;
  sandbox_tokens: SandboxTokenTable;
}
