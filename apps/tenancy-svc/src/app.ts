import { type Database, migrateToLatest } from "@agentplane/db";
import type { Bus } from "@agentplane/events";
import {
  createServiceApp,
  type InternalKeys,
  type Logger,
  type ServiceApp,
  type ServiceInstance,
} from "@agentplane/service-kit";
import { sql } from "kysely";
import { LocalAuthorizer } from "./authz/local-authorizer.ts";
import { type ResolvedTenancyConfig, resolveConfig, type TenancyConfig, type TenancyContext } from "./context.ts";
import { assertSecretKey } from "./crypto/secret-box.ts";
import { migrations } from "./db/migrations/index.ts";
import type { TenancyDatabase } from "./db/schema.ts";
import { registerRoutes } from "./routes/index.ts";
import { initializeInstallation } from "./services/installation.ts";

export const TENANCY_SCHEMA = "tenancy";

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
}

/** Builds the tenancy service: migrates its schema, prepares the installation, registers routes. */
export async function createTenancyService(deps: TenancyDeps): Promise<TenancyService> {
  assertSecretKey(deps.config.secretKey);
  const config = resolveConfig(deps.config);
  await migrateToLatest(deps.database, TENANCY_SCHEMA, migrations);
  const db = deps.database.forSchema<TenancyDatabase>(TENANCY_SCHEMA);
  const authorizer = new LocalAuthorizer(db);
  const context: TenancyContext = { db, bus: deps.bus, logger: deps.logger, config, authorizer };
  const startup = await initializeInstallation(context);
  if (startup.bootstrapped) deps.logger.info("installation activated with the bootstrap token");

  const app = createServiceApp({ name: "tenancy", keys: deps.keys, logger: deps.logger });
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
    async ready() {
      try {
        await sql`select 1`.execute(db);
        return await deps.bus.ready();
      } catch {
        return false;
      }
    },
    async close() {
      // Nothing in the background: the database and the bus belong to the caller.
    },
  };
}
