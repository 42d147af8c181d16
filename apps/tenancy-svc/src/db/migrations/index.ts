import type { MigrationList } from "@agentplane/db";
import * as initial from "./0001-initial.ts";

/** Applied in this order; never rename or reorder an entry that has shipped. */
export const migrations: MigrationList = {
  "0001_initial": initial,
};
