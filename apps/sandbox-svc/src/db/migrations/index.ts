import type { MigrationList } from "@agentplane/db";
import * as init from "./0001_init.ts";
import * as workspaceArchives from "./0003_workspace_archives.ts";
import * as workspaceSnapshotRef from "./0004_workspace_snapshot_ref.ts";
import * as pendingWorkspaceRestore from "./0005_pending_workspace_restore.ts";
import * as revisionAuthorName from "./0006_revision_author_name.ts";
import * as runningSandboxesIndex from "./0007_running_sandboxes_index.ts";

// 0002 is the outbox's (outboxMigrations("0002"), added where the service migrates).
export const migrations: MigrationList = {
  "0001_init": init,
  "0003_workspace_archives": workspaceArchives,
  "0004_workspace_snapshot_ref": workspaceSnapshotRef,
  "0005_pending_workspace_restore": pendingWorkspaceRestore,
  "0006_revision_author_name": revisionAuthorName,
  "0007_running_sandboxes_index": runningSandboxesIndex,
};
