import { type Database, migrateToLatest } from "@agentplane/db";
import { type Bus, createOutbox, type Outbox } from "@agentplane/events";
import {
  type Authorizer,
  checkReadiness,
  createServiceApp,
  type InternalKeys,
  type Logger,
  objectLimitsOr,
  type ReadinessChecks,
  type ScopedIdentityKey,
  type ServiceApp,
  type ServiceClient,
  type ServiceInstance,
  withSandboxTokens,
} from "@agentplane/service-kit";
import { sql } from "kysely";
import { PolicyCompiler } from "./cedar/compiler.ts";
import type { GovernanceConfig } from "./config.ts";
import type { GovernanceContext } from "./context.ts";
import { migrations } from "./db/migrations/index.ts";
import { GOVERNANCE_SCHEMA, type GovernanceDb } from "./db/schema.ts";
import { egressIdentityKey } from "./egress-identity.ts";
import { DecisionEngine } from "./engine/decision-engine.ts";
import { ChangeFanout } from "./engine/invalidation.ts";
import { registerRoutes } from "./routes/index.ts";
import { rewrapCredentials } from "./services/credentials.ts";
import { startDriftAudit } from "./services/drift.ts";
import { EgressVersions } from "./services/egress-versions.ts";
import { followProjectLabels } from "./services/project-labels.ts";

export { GOVERNANCE_SCHEMA };

export interface GovernanceServiceDeps {
  database: Database;
  bus: Bus;
  keys: InternalKeys;
  /**
   * `EGRESS_IDENTITY_PUBLIC_KEY`: the egress proxy's own key, accepted for its egress decisions
   * only (decision 0062). Without it identities signed with that key are refused.
   */
  egressPublicKey?: ScopedIdentityKey["publicKey"];
  logger: Logger;
  /** Tenancy's decisions: the tenancy service itself in process, or a RemoteAuthorizer. */
  authorizer: Authorizer;
  /** tenancy's internal API: the principal a project admin asks a decision for. */
  tenancy?: ServiceClient;
  /** sandbox-svc's internal API (effective policy, drift); without it those answer from bindings alone. */
  sandboxes?: ServiceClient;
  config: GovernanceConfig;
}

export interface GovernanceService extends ServiceInstance {
  app: ServiceApp;
  /** Internals for tests and for services that share the process. */
  context: GovernanceContext;
  outbox: Outbox;
}

/** Builds governance-svc: migrates its schema, starts the change fan-out, registers routes. */
export async function createGovernanceService(deps: GovernanceServiceDeps): Promise<GovernanceService> {
  const config = deps.config;
  if (config.secretKey.length !== 32) throw new Error("the secret key must be 32 bytes (AES-256)");
  await migrateToLatest(deps.database, GOVERNANCE_SCHEMA, migrations);
  const db = deps.database.forSchema<GovernanceDb>(GOVERNANCE_SCHEMA);
  if (config.previousSecretKey) {
    // A master key rotation: data keys the previous key wraps are re-wrapped under the new one, so
    // the previous key can be removed after this start (as tenancy re-seals its own secrets).
    const rewrapped = await rewrapCredentials(db, { current: config.secretKey, previous: config.previousSecretKey });
    deps.logger.info({ rewrapped }, "credential data keys re-wrapped under the current master key");
  }
  const outbox = createOutbox({
    database: deps.database,
    schema: GOVERNANCE_SCHEMA,
    bus: deps.bus,
    logger: deps.logger,
    ...config.eventRelay,
  });
  const engine = new DecisionEngine(db, deps.logger, {
    ...(config.refreshAfterMs !== undefined ? { refreshAfterMs: config.refreshAfterMs } : {}),
  });
  const fanout = new ChangeFanout({
    db,
    bus: deps.bus,
    logger: deps.logger,
    onChange: (orgId) => engine.invalidate(orgId),
    ...(config.heartbeatMs !== undefined ? { heartbeatMs: config.heartbeatMs } : {}),
  });
  const context: GovernanceContext = {
    db,
    database: deps.database,
    bus: deps.bus,
    outbox,
    logger: deps.logger,
    // A sandbox token reads its own sandbox's effective policy (an agent asks what it may do).
    authorizer: withSandboxTokens(deps.authorizer, ["sandboxes:read"]),
    engine,
    egressVersions: new EgressVersions(db, (err) =>
      deps.logger.warn({ err: (err as Error).message }, "egress policy versions not recorded"),
    ),
    fanout,
    tenancy: deps.tenancy,
    sandboxes: deps.sandboxes,
    secrets: {
      current: config.secretKey,
      previous: config.previousSecretKey,
      rotationGraceMs: (config.credentialGraceSeconds ?? 3600) * 1000,
    },
    sts: config.sts ?? {},
    counters: { allow: 0, deny: 0, dryrunDeny: 0, credentialResolutions: 0 },
    objectLimits: objectLimitsOr(config.objectLimits),
    compiler: new PolicyCompiler(),
  };
  await fanout.start();
  const projectLabels = await followProjectLabels(db, deps.bus, (orgId) => fanout.changed(orgId));
  outbox.start();
  const driftIntervalMs = config.driftIntervalMs ?? 60_000;
  const drift = driftIntervalMs > 0 ? startDriftAudit(context, driftIntervalMs) : undefined;

  // Decisions come from memory; the database is needed for changes and cold organizations, the
  // bus for changes to reach the other replicas.
  const checks: ReadinessChecks = {
    database: async () => {
      await sql`select 1`.execute(db);
    },
    bus: () => deps.bus.ready(),
  };
  const app = createServiceApp({
    name: "governance",
    keys: deps.keys,
    ...(deps.egressPublicKey ? { scopedKeys: [egressIdentityKey(deps.egressPublicKey)] } : {}),
    logger: deps.logger,
    checks,
  });
  registerRoutes(app, context);

  return {
    name: "governance",
    app,
    fetch: (request) => app.fetch(request),
    context,
    outbox,
    ready: async () => (await checkReadiness(checks)).ready,
    readiness: () => checkReadiness(checks),
    async close() {
      drift?.stop();
      await projectLabels.close();
      await fanout.stop();
      await outbox.stop();
      await context.compiler.close();
    },
  };
}
