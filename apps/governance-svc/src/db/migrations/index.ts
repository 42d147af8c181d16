import type { MigrationList } from "@agentplane/db";
import { outboxMigrations } from "@agentplane/events";
import * as init from "./0001-init.ts";
import * as egressVersions from "./0003-egress-versions.ts";
import * as projectLabels from "./0004-project-labels.ts";

/** Applied in this order under an advisory lock; never rename or reorder an entry that has shipped. */
export const migrations: MigrationList = {
  "0001_init": init,
  // `governance.event_outbox`: audit records (changes, denials) waiting for the bus.
  ...outboxMigrations("0002"),
  "0003_egress_versions": egressVersions,
  "0004_project_labels": projectLabels,
};
