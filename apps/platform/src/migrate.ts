// `main.ts migrate`: every service's schema migrated to its latest version, then exit. The Helm
// chart runs it as a pre-install/pre-upgrade Job, so a new version's Pods start on a migrated
// database; each service still migrates at start (a no-op then), under the same advisory lock.
import { type Database, type MigrationList, migrateToLatest, openDatabase } from "@agentplane/db";
import { outboxMigrations } from "@agentplane/events";
import { migrations as audit } from "../../audit-svc/src/db/migrations/index.ts";
import { AUDIT_SCHEMA } from "../../audit-svc/src/db/schema.ts";
import { migrations as connections } from "../../connections-svc/src/db/migrations/index.ts";
import { CONNECTIONS_SCHEMA } from "../../connections-svc/src/db/schema/index.ts";
import { migrations as governance } from "../../governance-svc/src/db/migrations/index.ts";
import { GOVERNANCE_SCHEMA } from "../../governance-svc/src/db/schema.ts";
import { INFERENCE_SCHEMA, migrations as inference } from "../../inference-proxy/src/db/migrations.ts";
import { migrations as sandbox } from "../../sandbox-svc/src/db/migrations/index.ts";
import { migrations as tenancy } from "../../tenancy-svc/src/db/migrations/index.ts";
import { TENANCY_SCHEMA } from "../../tenancy-svc/src/db/schema.ts";

/** Each service's schema and its migrations, exactly as the service applies them at start. */
export const SERVICE_MIGRATIONS: { schema: string; migrations: MigrationList }[] = [
  { schema: TENANCY_SCHEMA, migrations: tenancy },
  { schema: AUDIT_SCHEMA, migrations: audit },
  { schema: GOVERNANCE_SCHEMA, migrations: governance },
  { schema: CONNECTIONS_SCHEMA, migrations: connections },
  { schema: INFERENCE_SCHEMA, migrations: inference },
  // sandbox-svc appends the outbox's tables (createSandboxService).
  { schema: "sandbox", migrations: { ...sandbox, ...outboxMigrations("0002") } },
];

/** Migrates every schema in turn; returns the migrations applied, per schema. */
export async function migrateAll(database: Database): Promise<Record<string, string[]>> {
  const applied: Record<string, string[]> = {};
  for (const { schema, migrations } of SERVICE_MIGRATIONS) {
    applied[schema] = await migrateToLatest(database, schema, migrations);
  }
  return applied;
}

/** The Job's entry point: `DATABASE_URL` from the environment, a line per schema on stdout. */
export async function runMigrations(env: NodeJS.ProcessEnv): Promise<void> {
  const url = env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL must be set to migrate");
  const database = await openDatabase(url);
  try {
    const applied = await migrateAll(database);
    for (const [schema, names] of Object.entries(applied)) {
      process.stdout.write(`${schema}: ${names.length === 0 ? "up to date" : `applied ${names.join(", ")}`}\n`);
    }
  } finally {
    await database.close();
  }
}
