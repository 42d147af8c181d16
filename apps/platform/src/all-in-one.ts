import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "@agentplane/db";
import { createBus } from "@agentplane/events";
import { createLogger, parseEnv } from "@agentplane/service-kit";
import { assemblePlatform } from "./assemble.ts";
import { AllInOneEnvSchema, dataDirOf } from "./config.ts";
import { printWelcome } from "./welcome.ts";

/** `npm start`: every service in this process, PGlite under the data dir, the in-memory bus. */
export async function runAllInOne(rawEnv: Record<string, string | undefined>): Promise<void> {
  const env = parseEnv(AllInOneEnvSchema, rawEnv);
  const logger = createLogger("agentplane", env.LOG_LEVEL);
  const dataDir = dataDirOf(env);
  mkdirSync(dataDir, { recursive: true });
  const databaseUrl = env.DATABASE_URL ?? `pglite://${join(dataDir, "pgdata")}`;
  const database = await openDatabase(databaseUrl);
  const bus = createBus({ redisUrl: env.REDIS_URL });
  const platform = await assemblePlatform({ env, dataDir, database, bus, logger });
  printWelcome({ env, dataDir, platform });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    try {
      await platform.close();
      await bus.close();
      await database.close();
    } finally {
      process.exit(0);
    }
  };
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
}
