import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { SANDBOX_INGRESS_HEADER } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { migrateToLatest } from "@agentplane/db";
import { type Bus, createOutbox, outboxMigrations } from "@agentplane/events";
import {
  type Authorizer,
  checkReadiness,
  createServiceApp,
  type InternalKeys,
  type Logger,
  type ReadinessChecks,
  type ServiceClient,
  type ServiceInstance,
} from "@agentplane/service-kit";
import { sql } from "kysely";
import { migrations } from "./db/migrations/index.ts";
import type { SandboxDB } from "./db/schema.ts";
import { LocalDriver, type LocalIsolation } from "./driver/local/local-driver.ts";
import type { SandboxDriver } from "./driver/types.ts";
import { decideEgress } from "./egress/decide.ts";
import { EgressProxy } from "./egress/proxy.ts";
import {
  forwardedIngressFetch,
  forwardedIngressUpgrade,
  type IngressTarget,
  ingressFetch,
  ingressUpgrade,
} from "./ingress.ts";
import type { RouteDeps } from "./routes/helpers.ts";
import { registerQuerySandboxes } from "./routes/internal/query-sandboxes.ts";
import { registerResolveSandboxToken } from "./routes/internal/resolve-token.ts";
import { registerK8sDiscovery } from "./routes/k8s/discovery.ts";
import { registerK8sGetPod } from "./routes/k8s/get-pod.ts";
import { registerK8sListPods } from "./routes/k8s/list-pods.ts";
import { registerSandboxTokens } from "./routes/sandbox-tokens/tokens.ts";
import { registerCreateSandbox } from "./routes/sandboxes/create.ts";
import { registerDeleteSandbox } from "./routes/sandboxes/delete.ts";
import { registerGetSandbox } from "./routes/sandboxes/get.ts";
import { registerListSandboxes } from "./routes/sandboxes/list.ts";
import { registerListSandboxRevisions } from "./routes/sandboxes/revisions.ts";
import { registerRollbackSandbox } from "./routes/sandboxes/rollback.ts";
import { registerStartSandbox } from "./routes/sandboxes/start.ts";
import { registerStopSandbox } from "./routes/sandboxes/stop.ts";
import { registerUpdateSandbox } from "./routes/sandboxes/update.ts";
import { registerExecShell } from "./routes/shell/exec.ts";
import { registerShellSessions } from "./routes/shell/sessions.ts";
import { type SandboxDeps, type SandboxServiceConfig, SYSTEM_ACTOR } from "./services/context.ts";
import { bootSandbox, recordUnexpectedExit, stopSandbox } from "./services/sandboxes.ts";
import { ShellSessions } from "./services/shell-sessions.ts";
import { createExecUpgradeHandler, openStreams } from "./ws/exec-stream.ts";

export const SANDBOX_SCHEMA = "sandbox";

export interface SandboxConfig extends SandboxServiceConfig {
  /** Workspaces and runtime files of the local driver. */
  dataDir: string;
  /** `bwrap` (default) or `none` (no isolation, explicit opt-in). */
  isolation?: LocalIsolation;
  /** Local image catalog: name → root filesystem directory. */
  images?: Record<string, string>;
  /** Test-only (`SANDBOX_EGRESS_HOST_MAP`): egress names → local `address[:port]` stand-ins. */
  egressHostMap?: Record<string, string>;
}

export interface SandboxServiceDeps {
  database: Database;
  bus: Bus;
  keys: InternalKeys;
  logger: Logger;
  authorizer: Authorizer;
  config: SandboxConfig;
  /** Another driver (Kubernetes); the local driver when absent. */
  driver?: SandboxDriver;
  /** governance-svc (`ServiceClient("governance", …)`): admission, exec and egress decisions; none when absent. */
  governance?: ServiceClient;
}

export interface SandboxService extends ServiceInstance {
  handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** HTTP for `<slug>.<ingress host>`: the gateway parses the Host and authenticates an optional bearer. */
  ingress(request: Request, target: IngressTarget): Promise<Response>;
  /** WebSocket/upgrade for an ingress host. */
  ingressUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: IngressTarget): void;
  driver: SandboxDriver;
}

export async function createSandboxService(input: SandboxServiceDeps): Promise<SandboxService> {
  const { database, bus, keys, logger, authorizer, config } = input;
  await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
  const outbox = createOutbox({ database, schema: SANDBOX_SCHEMA, bus, logger });
  outbox.start();
  // With governance to ask, every bwrap sandbox gets the platform's egress proxy, which decides
  // each connection's destination as it opens (so a policy change applies without a restart).
  let egressDeps: SandboxDeps | undefined;
  const egress =
    input.governance && !input.driver && (config.isolation ?? "bwrap") === "bwrap"
      ? new EgressProxy({
          decide: (sandboxId, host, port) => decideEgress(egressDeps as SandboxDeps, sandboxId, host, port),
          logger,
          ...(config.egressHostMap ? { hostMap: config.egressHostMap } : {}),
        })
      : undefined;
  const driver =
    input.driver ??
    new LocalDriver({
      dataDir: config.dataDir,
      isolation: config.isolation ?? "bwrap",
      ...(config.images ? { images: config.images } : {}),
      ...(egress ? { egress } : {}),
      logger,
    });
  logger.info(driver.describe(), "sandbox driver");
  const db = database.forSchema<SandboxDB>(SANDBOX_SCHEMA);
  const base = {
    db,
    database,
    bus,
    outbox,
    driver,
    authorizer,
    logger,
    config,
    ...(input.governance ? { governance: input.governance } : {}),
  };
  const sessions = new ShellSessions(base);
  const deps: RouteDeps = { ...base, sessions };
  egressDeps = deps;

  const checks: ReadinessChecks = {
    database: async () => {
      await sql`select 1`.execute(database.kysely);
    },
    bus: () => bus.ready(),
    driver: () => driver.checkAvailable(),
  };
  const app = createServiceApp({ name: "sandbox", keys, logger, checks });
  registerListSandboxes(app, deps);
  registerCreateSandbox(app, deps);
  registerGetSandbox(app, deps);
  registerUpdateSandbox(app, deps);
  registerDeleteSandbox(app, deps);
  registerStartSandbox(app, deps);
  registerStopSandbox(app, deps);
  registerListSandboxRevisions(app, deps);
  registerRollbackSandbox(app, deps);
  registerK8sDiscovery(app);
  registerK8sListPods(app, deps);
  registerK8sGetPod(app, deps);
  registerExecShell(app, deps);
  registerShellSessions(app, deps);
  registerSandboxTokens(app, deps);
  registerResolveSandboxToken(app, deps);
  registerQuerySandboxes(app, deps);

  const unsubscribe = driver.onEvent(({ sandboxId, status }) => {
    void recordUnexpectedExit(deps, sandboxId, status.phase, status.message).catch((err) =>
      logger.error({ err, sandboxId }, "recording a sandbox exit failed"),
    );
  });

  // The local driver's sandboxes die with the process: bring back those that were running.
  const stale = await db
    .selectFrom("sandboxes")
    .selectAll()
    .where("state", "in", ["running", "starting", "stopping"])
    .execute();
  for (const row of stale) {
    if ((await driver.status(row.id)).phase === "running") continue;
    if (row.state === "stopping") {
      await db
        .updateTable("sandboxes")
        .set({ state: "stopped", updated_at: new Date() })
        .where("id", "=", row.id)
        .execute();
      continue;
    }
    await db
      .updateTable("sandboxes")
      .set({ state: "starting", updated_at: new Date() })
      .where("id", "=", row.id)
      .execute();
    void bootSandbox(deps, row);
  }

  const idleTimer = setInterval(() => {
    sessions.closeIdle();
    void stopIdle(deps).catch((err) => logger.warn({ err }, "idle check failed"));
  }, config.idleCheckIntervalMs ?? 15_000);
  idleTimer.unref();

  const execUpgrade = createExecUpgradeHandler(deps, keys);
  return {
    name: "sandbox",
    // A gateway in another process forwards ingress requests with SANDBOX_INGRESS_HEADER set.
    fetch: (request) =>
      request.headers.has(SANDBOX_INGRESS_HEADER) ? forwardedIngressFetch(deps, keys, request) : app.fetch(request),
    handleUpgrade: (req, socket, head) =>
      req.headers[SANDBOX_INGRESS_HEADER] !== undefined
        ? forwardedIngressUpgrade(deps, keys, req, socket, head)
        : execUpgrade(req, socket, head),
    ingress: (request, target) => ingressFetch(deps, request, target),
    ingressUpgrade: (req, socket, head, target) => ingressUpgrade(deps, req, socket, head, target),
    driver,
    ready: async () => (await checkReadiness(checks)).ready,
    readiness: () => checkReadiness(checks),
    async close() {
      clearInterval(idleTimer);
      unsubscribe();
      sessions.closeAll();
      await driver.close();
      await egress?.closeAll();
      await outbox.stop();
    },
  };
}

/** Stops running sandboxes whose idle timeout passed with no exec, session, stream or ingress activity. */
async function stopIdle(deps: RouteDeps): Promise<void> {
  const rows = await deps.db
    .selectFrom("sandboxes")
    .selectAll()
    .where("state", "=", "running")
    .where("idle_timeout_seconds", ">", 0)
    .execute();
  const now = Date.now();
  for (const row of rows) {
    const last = new Date(row.last_activity_at ?? row.started_at ?? row.updated_at).getTime();
    if (now - last < row.idle_timeout_seconds * 1000) continue;
    if ((openStreams.get(row.id) ?? 0) > 0 || deps.sessions.hasSessions(row.id)) continue;
    await stopSandbox(deps, SYSTEM_ACTOR, row.project_id, row.id, "idle timeout").catch((err) =>
      deps.logger.warn({ err, sandboxId: row.id }, "idle stop failed"),
    );
  }
}
