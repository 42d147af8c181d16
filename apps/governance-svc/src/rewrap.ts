// Re-wraps every credential data key with the current master key, after a master key rotation:
//   AGENTPLANE_SECRET_KEY=<new> AGENTPLANE_SECRET_KEY_PREVIOUS=<old> DATABASE_URL=… \
//     node apps/governance-svc/src/rewrap.ts
// Run it once with both keys set; afterwards AGENTPLANE_SECRET_KEY_PREVIOUS can be removed.
import { migrateToLatest, openDatabase } from "@agentplane/db";
import { parseEnv } from "@agentplane/service-kit";
import { GovernanceEnvSchema } from "./config.ts";
import { migrations } from "./db/migrations/index.ts";
import { GOVERNANCE_SCHEMA, type GovernanceDb } from "./db/schema.ts";
import { rewrapCredentials } from "./services/credentials.ts";

const env = parseEnv(
  GovernanceEnvSchema.pick({ DATABASE_URL: true, AGENTPLANE_SECRET_KEY: true, AGENTPLANE_SECRET_KEY_PREVIOUS: true }),
);
if (!env.AGENTPLANE_SECRET_KEY_PREVIOUS) {
  process.stderr.write("AGENTPLANE_SECRET_KEY_PREVIOUS must be set to the key the credentials are wrapped with now\n");
  process.exit(2);
}
const database = await openDatabase(env.DATABASE_URL);
try {
  await migrateToLatest(database, GOVERNANCE_SCHEMA, migrations);
  const changed = await rewrapCredentials(database.forSchema<GovernanceDb>(GOVERNANCE_SCHEMA), {
    current: env.AGENTPLANE_SECRET_KEY,
    previous: env.AGENTPLANE_SECRET_KEY_PREVIOUS,
  });
  process.stdout.write(`re-wrapped ${changed} credential(s) with the current key\n`);
} finally {
  await database.close();
}
