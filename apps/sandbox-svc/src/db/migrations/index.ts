import type { MigrationList } from "@agentplane/db";
import * as init from "./0001_init.ts";

export const migrations: MigrationList = { "0001_init": init };
