export { countRows } from "./count-rows.ts";
export {
  type Database,
  type DatabaseKind,
  DatabaseUnavailableError,
  type OpenDatabaseOptions,
  openDatabase,
  redactUrl,
} from "./database.ts";
export { initialiseEmbeddedInChild } from "./embedded-init.ts";
export { isUniqueViolation } from "./errors.ts";
export { type MigrationList, migrateToLatest } from "./migrate.ts";
export { type ArrayElement, pgArray, pgColumns, pgUnnest } from "./pg-array.ts";
export { pgTemplated, pgTemplatedSource } from "./pg-templates.ts";
export { advisoryKey, lockForTransaction } from "./scope-lock.ts";
export { startUpkeep, UPKEEP_INTERVAL_MS, type UpkeepOptions, vacuumAnalyze } from "./upkeep.ts";
