import type { SpendReleaseRequest, SpendReserveRequest, SpendSettleRequest } from "@agentplane/contracts";
import { type Database, migrateToLatest } from "@agentplane/db";
import { type Bus, createOutbox } from "@agentplane/events";
import { Pricing } from "@agentplane/pricing";
import {
  type Authorizer,
  checkReadiness,
  createServiceApp,
  type InternalKeys,
  type Logger,
  type ReadinessChecks,
  type ServiceApp,
  type ServiceInstance,
} from "@agentplane/service-kit";
import { sql } from "kysely";
import { type AuditConfig, DEFAULT_RESERVATION_RETENTION_MS, DEFAULT_RETENTION_DAYS } from "./config.ts";
import type { AuditContext } from "./context.ts";
import { migrations } from "./db/migrations/index.ts";
import { AUDIT_SCHEMA, type AuditDb } from "./db/schema.ts";
import { type Ingestion, startIngestion } from "./ingest/consumer.ts";
import { countDeadLetters } from "./ingest/isolate.ts";
import { registerRoutes } from "./routes/index.ts";
import { pruneAuditRecords, pruneReservations, startMaintenance } from "./services/maintenance.ts";
import { SpendLedger } from "./services/spend.ts";

export { AUDIT_SCHEMA };

export interface AuditServiceDeps {
  database: Database;
  bus: Bus;
  keys: InternalKeys;
  logger: Logger;
  /** Tenancy's decisions: the tenancy service itself in process, or a RemoteAuthorizer. */
  authorizer: Authorizer;
  config?: AuditConfig;
}

export interface AuditService extends ServiceInstance {
  app: ServiceApp;
  /** Internals for tests and for services that share the process. */
  context: AuditContext;
  /** The spend decision API in process (the same verbs as `/internal/spend/*`). */
  spend: {
    reserve(input: SpendReserveRequest): ReturnType<SpendLedger["reserve"]>;
    settle(input: SpendSettleRequest): ReturnType<SpendLedger["settle"]>;
    release(input: SpendReleaseRequest): ReturnType<SpendLedger["release"]>;
  };
  /** Writes events buffered by the consumers now (tests, shutdown). */
  drain(): Promise<void>;
  /** Events kept in `dead_letters` (all replicas) and dead-lettered by this process. */
  deadLetters(): Promise<{ stored: number; thisProcess: number }>;
  /** Runs retention once now; returns records deleted (-1 when another replica holds the lock). */
  prune(now?: Date): Promise<number>;
  /** Settles reservations expired at `now` (default: the current time) at their estimate. */
  expireReservations(now?: Date): Promise<number>;
  /** Deletes finished reservations past their retention at `now`; -1 when another replica holds the lock. */
  pruneReservations(now?: Date): Promise<number>;
}

/**
 * The audit service: consumes `audit.recorded` and `usage.recorded`, serves the audit trail,
 * usage costs and spending limits, and the internal spend decision API. Runs its migrations first.
 */
export async function createAuditService(deps: AuditServiceDeps): Promise<AuditService> {
  const config = deps.config ?? {};
  await migrateToLatest(deps.database, AUDIT_SCHEMA, migrations);
  const db = deps.database.forSchema<AuditDb>(AUDIT_SCHEMA);
  const pricing = new Pricing(config.priceOverrides);
  const spend = new SpendLedger(db, {
    ...(config.reservationTtlMs ? { reservationTtlMs: config.reservationTtlMs } : {}),
  });
  const retentionDays = config.retentionDays ?? DEFAULT_RETENTION_DAYS;
  const reservationRetentionMs = config.reservationRetentionMs ?? DEFAULT_RESERVATION_RETENTION_MS;

  // Audit consumes the bus: without it nothing reaches the trail, so both are required.
  const checks: ReadinessChecks = {
    database: async () => {
      await sql`select 1`.execute(deps.database.kysely);
    },
    bus: () => deps.bus.ready(),
  };
  const app = createServiceApp({ name: "audit", keys: deps.keys, logger: deps.logger, checks });
  const outbox = createOutbox({ database: deps.database, schema: AUDIT_SCHEMA, bus: deps.bus, logger: deps.logger });
  const context: AuditContext = { db, outbox, authorizer: deps.authorizer, spend };
  registerRoutes(app, context);
  outbox.start();

  const ingestion: Ingestion = await startIngestion({
    db,
    bus: deps.bus,
    logger: deps.logger,
    pricing,
    spend,
    options: config.consumer,
  });
  const deadLetters = async () => ({ stored: await countDeadLetters(db), thisProcess: ingestion.deadLettered });
  // Operators watch this counter: a dead letter is an event kept aside because storage rejected it.
  app.get("/metrics", async (c) => {
    const counts = await deadLetters();
    const lines = [
      "# HELP agentplane_audit_dead_letters Events kept in dead_letters because storage rejected their content.",
      "# TYPE agentplane_audit_dead_letters gauge",
      `agentplane_audit_dead_letters ${counts.stored}`,
      "# HELP agentplane_audit_dead_lettered_total Events this process dead-lettered since it started.",
      "# TYPE agentplane_audit_dead_lettered_total counter",
      `agentplane_audit_dead_lettered_total ${counts.thisProcess}`,
    ];
    return c.text(`${lines.join("\n")}\n`, 200, { "content-type": "text/plain; version=0.0.4" });
  });
  const maintenance =
    config.maintenance === false
      ? undefined
      : startMaintenance({
          database: deps.database,
          schema: AUDIT_SCHEMA,
          spend,
          logger: deps.logger,
          retentionDays,
          reservationRetentionMs,
          intervalMs: config.maintenanceIntervalMs ?? 30_000,
        });

  return {
    name: "audit",
    app,
    context,
    fetch: (request) => app.fetch(request),
    ready: async () => (await checkReadiness(checks)).ready,
    readiness: () => checkReadiness(checks),
    async close() {
      maintenance?.stop();
      await outbox.stop();
      await ingestion.close();
    },
    spend: {
      reserve: (input) => spend.reserve(input),
      settle: (input) => spend.settle(input),
      release: (input) => spend.release(input),
    },
    drain: () => ingestion.drain(),
    deadLetters,
    prune: (now) => pruneAuditRecords(deps.database, AUDIT_SCHEMA, retentionDays, now),
    expireReservations: (now) => spend.expire(now),
    pruneReservations: (now) => pruneReservations(deps.database, AUDIT_SCHEMA, reservationRetentionMs, now),
  };
}
