export { type Database, type DatabaseKind, type OpenDatabaseOptions, openDatabase, redactUrl } from "./database.ts";
export { type MigrationList, migrateToLatest } from "./migrate.ts";
