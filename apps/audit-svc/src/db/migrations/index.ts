import type { MigrationList } from "@agentplane/db";
import * as init from "./0001-init.ts";

/** Applied in this order under an advisory lock (see `migrateToLatest`). */
export const migrations: MigrationList = {
  "0001_init": init,
};
