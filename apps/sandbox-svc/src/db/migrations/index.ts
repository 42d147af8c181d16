import type { MigrationList } from "@agentplane/db";
import * as init from "./0001_init.ts";
import * as workspaceArchives from "./0003_workspace_archives.ts";

// 0002 is the outbox's (outboxMigrations("0002"), added where the service migrates).
export const migrations: MigrationList = { "0001_init": init, "0003_workspace_archives": workspaceArchives };
