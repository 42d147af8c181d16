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
  RemoteAuthorizer,
  type ScopedIdentityKey,
  type ServiceClient,
  type ServiceInstance,
  withSandboxTokens,
} from "@agentplane/service-kit";
import { sql } from "kysely";
import type { SandboxContext } from "./context.ts";
import { migrations } from "./db/migrations/index.ts";
import type { SandboxDB } from "./db/schema.ts";
import { yieldToIo } from "./db/yield-to-io.ts";
import type { KubernetesConfig } from "./driver/kubernetes/config.ts";
import { LocalDriver, type LocalIsolation } from "./driver/local/local-driver.ts";
import type { SandboxDriver } from "./driver/types.ts";
import { decideEgress, type EgressDeps, recordEgressRefusal } from "./egress/decide.ts";
import { localEgressFacts } from "./egress/facts.ts";
import { platformDestination } from "./egress/platform.ts";
import { type EgressLimits, EgressProxy } from "./egress/proxy.ts";
import { egressProxyIdentityKey } from "./egress/proxy-identity-key.ts";
import { RefusalWindow } from "./egress/refusal-window.ts";
import {
  forwardedIngressFetch,
  forwardedIngressUpgrade,
  type IngressTarget,
  ingressFetch,
  ingressUpgrade,
} from "./ingress.ts";
import { ProjectAccessCache } from "./project-access-cache.ts";
import { createExecUpgradeHandler } from "./routes/exec-stream/upgrade.ts";
import { registerRoutes } from "./routes/index.ts";
import type { SandboxServiceConfig } from "./services/context.ts";
import { startLifecycle } from "./services/lifecycle.ts";
import { ShellSessions } from "./services/shell-sessions.ts";

export const SANDBOX_SCHEMA = "sandbox";

export interface SandboxConfig extends SandboxServiceConfig {
  /** Workspaces and runtime files of the local driver. */
  dataDir: string;
  /** `bwrap` (default) or `none` (no isolation, explicit opt-in). */
  isolation?: LocalIsolation;
  /** The host uid a root service runs local sandboxes as (default 65533; 0: root). */
  hostUid?: number;
  /** Local image catalog: name → root filesystem directory. */
  images?: Record<string, string>;
  /** Test-only (`SANDBOX_EGRESS_HOST_MAP`): egress names → local `address[:port]` stand-ins. */
  egressHostMap?: Record<string, string>;
  /** `SANDBOX_EGRESS_REFUSAL_WINDOW_MS`: repeats of one egress refusal within it share one audit record (60 s). */
  egressRefusalWindowMs?: number;
  /** The egress proxy's idle timeout and attempt rate per sandbox (`SANDBOX_EGRESS_IDLE_TIMEOUT_MS`, …); defaults when absent. */
  egressLimits?: EgressLimits;
  /** `SANDBOX_DRIVER`: `local` when absent. */
  driver?: "local" | "kubernetes";
  /** The `kubernetes` driver's placement and timeouts (`SANDBOX_K8S_*`). */
  kubernetes?: KubernetesConfig;
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
  /**
   * `EGRESS_IDENTITY_PUBLIC_KEY`: the egress deployable's own key, accepted on its two internal
   * routes only (a sandbox's egress facts, a refusal to record; decision 0065).
   */
  egressPublicKey?: ScopedIdentityKey["publicKey"];
}

export interface SandboxService extends ServiceInstance {
  handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** HTTP for `<slug>.<ingress host>`: the gateway parses the Host and authenticates an optional bearer. */
  ingress(request: Request, target: IngressTarget): Promise<Response>;
  /** WebSocket/upgrade for an ingress host. */
  ingressUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: IngressTarget): void;
  driver: SandboxDriver;
}

/**
 * What a sandbox token may do in sandbox-svc: read its own sandbox and run commands in it (the
 * agent runtime's sandbox switch). Nothing else here, and never another sandbox (see
 * docs/sandboxes.md for the whole list across the platform).
 */
const SANDBOX_TOKEN_PERMISSIONS = ["sandboxes:read", "sandboxes:exec"] as const;

export async function createSandboxService(input: SandboxServiceDeps): Promise<SandboxService> {
  const { database, bus, keys, logger, authorizer, config } = input;
  await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
  const outbox = createOutbox({ database, schema: SANDBOX_SCHEMA, bus, logger });
  outbox.start();
  // With governance to ask, every bwrap sandbox gets the platform's egress proxy, which decides
  // each connection's destination as it opens (so a policy change applies without a restart).
  // The platform's own API is one of its destinations: sandboxes call it through the proxy.
  let egressDeps: EgressDeps | undefined;
  const refusals = new RefusalWindow({
    ...(config.egressRefusalWindowMs ? { windowMs: config.egressRefusalWindowMs } : {}),
    onError: (err) => logger.warn({ err }, "egress refusal summary not recorded"),
  });
  const withEgress =
    input.governance !== undefined &&
    !input.driver &&
    config.driver !== "kubernetes" &&
    (config.isolation ?? "bwrap") === "bwrap";
  const platform = withEgress && config.apiUrl ? platformDestination(config.apiUrl) : undefined;
  const egress = withEgress
    ? new EgressProxy({
        decide: (sandboxId, host, port, toPlatform) =>
          decideEgress(egressDeps as EgressDeps, sandboxId, host, port, toPlatform),
        refused: (sandboxId, host, port, reason) =>
          recordEgressRefusal(egressDeps as EgressDeps, sandboxId, host, port, reason),
        logger,
        ...config.egressLimits,
        ...(config.egressHostMap ? { hostMap: config.egressHostMap } : {}),
        ...(platform ? { platform } : {}),
      })
    : undefined;
  // The Kubernetes client is loaded only when that driver is chosen.
  const kubernetes =
    !input.driver && config.driver === "kubernetes"
      ? (await import("./driver/kubernetes/index.ts")).createKubernetesDriver(
          config.kubernetes ?? (await import("./driver/kubernetes/config.ts")).kubernetesConfigFrom({}),
          logger,
        )
      : undefined;
  const driver =
    input.driver ??
    kubernetes ??
    new LocalDriver({
      dataDir: config.dataDir,
      isolation: config.isolation ?? "bwrap",
      ...(config.hostUid !== undefined ? { hostUid: config.hostUid } : {}),
      ...(config.images ? { images: config.images } : {}),
      ...(egress ? { egress } : {}),
      logger,
    });
  logger.info(driver.describe(), "sandbox driver");
  // Embedded, the driver's I/O is read between statements (yield-to-io.ts).
  const schemaDb = database.forSchema<SandboxDB>(SANDBOX_SCHEMA);
  const db = database.kind === "pglite" ? schemaDb.withPlugin(yieldToIo) : schemaDb;
  const base = {
    db,
    database,
    bus,
    outbox,
    driver,
    // Tenancy in this process reads its tables for every question; a RemoteAuthorizer caches already.
    authorizer: withSandboxTokens(
      authorizer instanceof RemoteAuthorizer ? authorizer : new ProjectAccessCache(authorizer),
      SANDBOX_TOKEN_PERMISSIONS,
    ),
    logger,
    // Sandboxes receive the platform's address as they reach it (through the proxy).
    config: platform ? { ...config, apiUrl: platform.sandboxUrl } : config,
    ...(input.governance ? { governance: input.governance } : {}),
  };
  const sessions = new ShellSessions(base);
  const deps: SandboxContext = { ...base, sessions };
  egressDeps = {
    facts: localEgressFacts(deps),
    logger,
    refusals,
    ...(base.governance ? { governance: base.governance } : {}),
  };

  const checks: ReadinessChecks = {
    database: async () => {
      await sql`select 1`.execute(database.kysely);
    },
    bus: () => bus.ready(),
    driver: () => driver.checkAvailable(),
  };
  const app = createServiceApp({
    name: "sandbox",
    keys,
    ...(input.egressPublicKey ? { scopedKeys: [egressProxyIdentityKey(input.egressPublicKey)] } : {}),
    logger,
    checks,
  });
  registerRoutes(app, deps);
  const lifecycle = await startLifecycle(deps, sessions);

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
      lifecycle.stop();
      sessions.closeAll();
      await driver.close();
      await egress?.closeAll();
      // The counted repeats of open windows are recorded before the outbox stops.
      await refusals.flush();
      await outbox.stop();
    },
  };
}
