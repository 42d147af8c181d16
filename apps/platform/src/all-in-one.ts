import { existsSync } from "node:fs";
import { join } from "node:path";
import { initialiseEmbeddedInChild, openDatabase } from "@agentplane/db";
import { createBus } from "@agentplane/events";
import { hasProviderCredential, inferenceConfigFromSettings } from "@agentplane/inference-proxy";
import { sandboxesRunAsOwnHostUser } from "@agentplane/sandbox-svc";
import { createLogger, installProcessGuard, onShutdown, parseEnv } from "@agentplane/service-kit";
import { assemblePlatform } from "./assemble.ts";
import { AllInOneEnvSchema, dataDirOf } from "./config.ts";
import { closeDataDirEntries, lockDataDir, prepareDataDir } from "./data-dir.ts";
import type { LocalRuntime } from "./runtime.ts";
import { collectStartupGarbage } from "./startup-gc.ts";
import { printWelcome } from "./welcome.ts";

/** `npm start`: every service in this process, PGlite under the data dir, the in-memory bus. */
export async function runAllInOne(rawEnv: Record<string, string | undefined>): Promise<void> {
  const env = parseEnv(AllInOneEnvSchema, rawEnv);
  const logger = createLogger("agentplane", env.LOG_LEVEL);
  installProcessGuard(logger);
  const dataDir = dataDirOf(env);
  // Local sandboxes of a host user of their own, with workspaces in the data dir: that user's bwrap
  // must search it.
  const searchable = env.SANDBOX_DATA_DIR === undefined && sandboxesRunAsOwnHostUser(env);
  prepareDataDir(dataDir, { searchable });
  // Before the database opens: a second start on this directory stops here, its files untouched.
  const releaseDataDir = lockDataDir(dataDir);
  process.once("exit", releaseDataDir);
  const databaseUrl = env.DATABASE_URL ?? `pglite://${join(dataDir, "pgdata")}`;
  // What a start is doing, while it does it: the first start initialises the embedded database.
  const started = performance.now();
  const step = (msg: string) => logger.info({ elapsedMs: Math.round(performance.now() - started) }, msg);
  const embedded = databaseUrl.startsWith("pglite://");
  if (embedded) {
    const pgdata = join(dataDir, "pgdata");
    if (!existsSync(join(pgdata, "PG_VERSION")) && databaseUrl === `pglite://${pgdata}`) {
      step("initialising the embedded database (first start only)");
      await initialiseEmbeddedInChild(pgdata);
      if (searchable) closeDataDirEntries(dataDir);
    }
    step("opening the embedded database");
  }
  const database = await openDatabase(databaseUrl, {
    upkeep: { onError: (err) => logger.warn({ err: err.message }, "embedded database upkeep failed") },
  });
  step("starting services and applying migrations");
  const bus = await createBus({ redisUrl: env.REDIS_URL });
  const inference = inferenceConfigFromSettings(env);
  const closeStorage = async () => {
    await bus.close();
    await database.close();
  };
  // As runService does: a start that fails closes the storage it opened before the launcher reports it.
  const platform = await assemblePlatform({ env, dataDir, database, bus, logger, inference }).catch(
    async (err: unknown) => {
      await closeStorage().catch(() => {});
      throw err;
    },
  );
  step("services ready");
  let runtime: LocalRuntime | undefined;
  let runtimeError: unknown;
  if (env.AGENT_RUNTIME) {
    try {
      // Imported only when it runs: the runtime's module graph (its tools, the meeting browser's
      // driver, model SDKs) is tens of MB of heap that AGENT_RUNTIME=off never needs.
      const { startLocalRuntime } = await import("./runtime.ts");
      runtime = await startLocalRuntime({ env, rawEnv, dataDir, publicUrl: platform.publicUrl, platform, logger });
    } catch (err) {
      // The control plane stays useful without the runtime (e.g. its port is taken); the banner says why.
      runtimeError = err;
      logger.warn({ err: (err as Error).message }, "agent runtime not started");
    }
  }
  // What the start made in the data dir (the database, the runtime's home) is closed to others too.
  if (searchable) closeDataDirEntries(dataDir);
  // Before the banner, which tells a user (and a test) that the start is over.
  collectStartupGarbage();
  printWelcome({ env, dataDir, platform, runtime, runtimeError, hasModel: hasProviderCredential(inference) });

  onShutdown(
    async () => {
      await runtime?.close();
      await platform.close();
      await closeStorage();
      releaseDataDir();
    },
    logger,
    { servers: [platform.server], delayMs: env.SHUTDOWN_DELAY_MS, drainMs: env.SHUTDOWN_DRAIN_MS },
  );
}
