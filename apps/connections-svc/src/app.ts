import { randomBytes } from "node:crypto";
import { type Database, migrateToLatest } from "@agentplane/db";
import { type Bus, createOutbox } from "@agentplane/events";
import {
  type Authorizer,
  checkReadiness,
  createServiceApp,
  type InternalKeys,
  type Logger,
  objectLimitsOr,
  type ReadinessChecks,
  type ServiceApp,
  type ServiceClient,
  type ServiceInstance,
} from "@agentplane/service-kit";
import { AddressPolicy, SafeFetcher } from "@agentplane/service-kit/outbound";
import { sql } from "kysely";
import { AwsCredentialResolver } from "./aws/credentials.ts";
import type { ConnectionsConfig } from "./config.ts";
import { startScheduledDiscoveries } from "./connectors/scheduler.ts";
import { ConnectorRuntime } from "./connectors/services/runtime.ts";
import type { ConnectionsContext } from "./context.ts";
import { migrations } from "./db/migrations/index.ts";
import { CONNECTIONS_SCHEMA, type ConnectionsDb } from "./db/schema/index.ts";
import { MAX_STREAM_MS, type PlatformClients, registerMcpEndpoints } from "./mcp/index.ts";
import { createTunnelUpgradeHandler } from "./routes/clusters/open-tunnel.ts";
import type { ConnectionsRouteContext } from "./routes/context.ts";
import { registerRoutes } from "./routes/index.ts";
import type { ProjectSigner } from "./services/project-signer.ts";
import { TunnelHub } from "./tunnel/hub.ts";

export { CONNECTIONS_SCHEMA };

export interface ConnectionsServiceDeps {
  database: Database;
  bus: Bus;
  keys: InternalKeys;
  logger: Logger;
  /** Tenancy's decisions: the tenancy service itself in process, or a RemoteAuthorizer. */
  authorizer: Authorizer;
  /** Signs with a project's current key (cluster JWTs, per-request tunnel JWTs). */
  signer: ProjectSigner;
  /** governance-svc's internal API; without it every governed action is allowed (no policies deployed). */
  governance?: ServiceClient;
  /** Services the MCP endpoints' platform tools call with the caller's identity (sandboxes, audit, tenancy). */
  platformClients?: PlatformClients;
  config?: ConnectionsConfig;
}

export interface ConnectionsService extends ServiceInstance {
  app: ServiceApp;
  context: ConnectionsContext;
}

/**
 * connections-svc: clusters (tunnel, relay, Kubernetes proxy), AWS connections (re-signing proxy)
 * and connectors. Runs its migrations, then registers each area's routes.
 */
export async function createConnectionsService(deps: ConnectionsServiceDeps): Promise<ConnectionsService> {
  await migrateToLatest(deps.database, CONNECTIONS_SCHEMA, migrations);
  const db = deps.database.forSchema<ConnectionsDb>(CONNECTIONS_SCHEMA);
  const config = deps.config ?? {};
  const outbox = createOutbox({
    database: deps.database,
    schema: CONNECTIONS_SCHEMA,
    bus: deps.bus,
    logger: deps.logger,
    ...config.eventRelay,
  });
  outbox.start();
  const checks: ReadinessChecks = {
    database: async () => {
      await sql`select 1`.execute(db);
    },
    bus: () => deps.bus.ready(),
  };
  const app = createServiceApp({ name: "connections", keys: deps.keys, logger: deps.logger, checks });
  const context: ConnectionsContext = {
    app,
    db,
    database: deps.database,
    bus: deps.bus,
    outbox,
    authorizer: deps.authorizer,
    governance: deps.governance,
    signer: deps.signer,
    keys: deps.keys,
    logger: deps.logger,
    outbound: new SafeFetcher({
      ...config.connectors?.fetcher,
      policy: new AddressPolicy(config.connectors?.allowedHosts ?? []),
    }),
    config: {
      replicaId: config.replicaId ?? `conn-${randomBytes(6).toString("hex")}`,
      heartbeatMs: config.heartbeatMs ?? 10_000,
      clusterJwtTtlSeconds: config.clusterJwtTtlSeconds ?? 900,
      awsTimeoutMs: config.awsTimeoutMs ?? 60_000,
      awsBodyIdleMs: config.awsBodyIdleMs ?? 30_000,
      awsBodyTimeoutMs: config.awsBodyTimeoutMs ?? 300_000,
      clusterProxyTimeoutMs: config.clusterProxyTimeoutMs ?? 60_000,
      clusterTunnelMaxRequests: config.clusterTunnelMaxRequests ?? 1000,
      objectLimits: objectLimitsOr(config.objectLimits),
      mcpStreamLifetimeMs: config.mcpStreamLifetimeMs ?? MAX_STREAM_MS,
      ...(config.replicaUrl ? { replicaUrl: config.replicaUrl } : {}),
    },
  };

  const connectorOptions = config.connectors ?? {};
  const routeContext: ConnectionsRouteContext = {
    ...context,
    hub: new TunnelHub(context),
    awsCredentials: new AwsCredentialResolver(context),
    connectors: new ConnectorRuntime(context),
    tenancy: deps.platformClients?.tenancy,
  };
  registerRoutes(app, routeContext);
  registerMcpEndpoints(app, context, routeContext.connectors, { governance: deps.governance, ...deps.platformClients });
  // Background work lives here, beside what stops it, rather than inside a route registration.
  const stopScheduledDiscoveries =
    connectorOptions.scheduler === false ? undefined : startScheduledDiscoveries(context, routeContext.connectors);

  return {
    name: "connections",
    app,
    context,
    fetch: (request) => app.fetch(request),
    handleUpgrade: createTunnelUpgradeHandler(routeContext),
    ready: async () => (await checkReadiness(checks)).ready,
    readiness: () => checkReadiness(checks),
    async close() {
      await routeContext.hub.close();
      stopScheduledDiscoveries?.();
      await routeContext.connectors.close();
      await context.outbound.close();
      await outbox.stop();
    },
  };
}
