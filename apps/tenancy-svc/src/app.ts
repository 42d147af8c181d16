import { type Database, migrateToLatest } from "@agentplane/db";
import { type Bus, createOutbox, type Outbox } from "@agentplane/events";
import {
  checkReadiness,
  createServiceApp,
  type InternalKeys,
  type Logger,
  type ReadinessChecks,
  type ServiceApp,
  type ServiceInstance,
} from "@agentplane/service-kit";
import { sql } from "kysely";
import { LocalAuthorizer } from "./authz/local-authorizer.ts";
import { type ResolvedTenancyConfig, resolveConfig, secretKeysOf, type TenancyConfig } from "./config.ts";
import type { TenancyContext } from "./context.ts";
import { assertSecretKey } from "./crypto/secret-box.ts";
import { migrations } from "./db/migrations/index.ts";
import { TENANCY_SCHEMA, type TenancyDatabase } from "./db/schema.ts";
import { rewrapSealedSecrets } from "./keys/rewrap.ts";
import { registerRoutes } from "./routes/index.ts";
import { initializeInstallation } from "./services/installation.ts";
import { OidcActivation } from "./services/oidc-activation.ts";
import { type SignInPruner, startSignInPruning } from "./services/sign-in-pruning.ts";

export { TENANCY_SCHEMA };

export interface TenancyDeps {
  database: Database;
  bus: Bus;
  /** Verifies the internal identity JWT (the public key is enough). */
  keys: InternalKeys;
  logger: Logger;
  config: TenancyConfig;
}

export interface TenancyService extends ServiceInstance {
  app: ServiceApp;
  /** Answers authorization from the tenancy tables; in-process services use it directly. */
  authorizer: LocalAuthorizer;
  config: ResolvedTenancyConfig;
  installationId: string;
  /** Whether the installation was activated when the service started (or by the bootstrap token now). */
  activated: boolean;
  /** Set when the installation is not activated: print it for the operator. A restart makes a new one. */
  setupCode?: string;
  /** Internals for tests and for services that share the process (e.g. issuing cluster JWTs). */
  context: TenancyContext;
  /** The outbox of domain audit events (`flush()` publishes what is waiting now; tests use it). */
  outbox: Outbox;
  /** Deletes long-expired device sign-ins and browser sessions on a timer; `run(now)` prunes now. */
  signInPruning: SignInPruner;
}

/** Builds the tenancy service: migrates its schema, prepares the installation, registers routes. */
export async function createTenancyService(deps: TenancyDeps): Promise<TenancyService> {
  assertSecretKey(deps.config.secretKey);
  const config = resolveConfig(deps.config);
  await migrateToLatest(deps.database, TENANCY_SCHEMA, migrations);
  const db = deps.database.forSchema<TenancyDatabase>(TENANCY_SCHEMA);
  if (config.previousSecretKey) {
    // A master key rotation: what the previous key sealed is re-sealed under the new one, so the
    // previous key can be removed after this start.
    const { rewrapped } = await rewrapSealedSecrets(db, secretKeysOf(config));
    deps.logger.info({ rewrapped }, "sealed secrets re-wrapped under the current master key");
  }
  const authorizer = new LocalAuthorizer(db);
  const outbox = createOutbox({
    database: deps.database,
    schema: TENANCY_SCHEMA,
    bus: deps.bus,
    logger: deps.logger,
    ...config.eventRelay,
  });
  const context: TenancyContext = {
    db,
    bus: deps.bus,
    outbox,
    logger: deps.logger,
    config,
    authorizer,
    ...(config.oidc ? { oidc: new OidcActivation(config.oidc, config) } : {}),
  };
  const startup = await initializeInstallation(context);
  if (startup.bootstrapped) deps.logger.info("installation activated with the bootstrap token");
  // Also publishes what an earlier process committed but could not publish before it stopped.
  outbox.start();
  const signInPruning = startSignInPruning({
    db,
    logger: deps.logger,
    ...(config.signInPruneIntervalMs !== undefined ? { intervalMs: config.signInPruneIntervalMs } : {}),
  });

  // The bus is reported but not required: while it is down, requests still succeed and their
  // audit events wait in the outbox.
  const checks: ReadinessChecks = {
    database: async () => {
      await sql`select 1`.execute(db);
    },
    bus: { check: () => deps.bus.ready(), required: false },
  };
  const app = createServiceApp({ name: "tenancy", keys: deps.keys, logger: deps.logger, checks });
  registerRoutes(app, context);

  return {
    name: "tenancy",
    app,
    fetch: (request) => app.fetch(request),
    authorizer,
    config,
    context,
    installationId: startup.installationId,
    activated: startup.activated,
    ...(startup.setupCode ? { setupCode: startup.setupCode } : {}),
    outbox,
    signInPruning,
    ready: async () => (await checkReadiness(checks)).ready,
    readiness: () => checkReadiness(checks),
    async close() {
      // Stops the relay; the database and the bus belong to the caller. Unpublished events stay in
      // the outbox table for the next start or another replica.
      await signInPruning.stop();
      await outbox.stop();
    },
  };
}
