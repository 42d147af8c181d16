import { randomBytes } from "node:crypto";
import type { ObjectLimits } from "@agentplane/contracts";
import type { OutboxTuning } from "@agentplane/events";
import { ConfigError, deploymentEnv, ObjectLimitsSettingSchema, parseEnv } from "@agentplane/service-kit";
import { AddressPolicy, type SafeFetcherOptions } from "@agentplane/service-kit/outbound";
import { z } from "zod";

/** How connectors and other tenant-aimed outbound calls are fetched, and whether they are re-discovered. */
export interface ConnectorOptions {
  /**
   * `CONNECTOR_ALLOWED_HOSTS`: hosts, host:port pairs or CIDR ranges that connectors and AWS endpoint
   * overrides may reach although internal.
   */
  allowedHosts?: string[];
  /** Overrides for the fetcher (tests: a resolver, short timeouts). */
  fetcher?: Omit<SafeFetcherOptions, "policy">;
  /** Periodic re-discovery into pending specs (default on; tests turn it off). */
  scheduler?: boolean;
}

/** What `createConnectionsService` takes as configuration (`configFromEnv` builds it for main.ts). */
export interface ConnectionsConfig {
  /** This replica's name in the tunnel owner registry (default: random per process). */
  replicaId?: string;
  /**
   * The internal base URL other connections replicas reach this one at, for proxy requests whose
   * tunnel lives here. Unset in all-in-one mode (one replica).
   */
  replicaUrl?: string;
  /** How often the platform checks a tunnel (HTTP/2 ping) and renews its registry entry (default 10 s). */
  heartbeatMs?: number;
  /** Lifetime of the cluster JWT handed to a relay over its tunnel (default 900 s, renewed at half). */
  clusterJwtTtlSeconds?: number;
  /**
   * Connectors and every other outbound call a tenant can aim (AWS endpoints): `CONNECTOR_ALLOWED_HOSTS`
   * (internal hosts they may reach), fetch limits; the connectors' scheduler.
   */
  connectors?: ConnectorOptions;
  /** How long a cluster proxy request may take (default 60 s); a watch or a followed log, until its head. */
  clusterProxyTimeoutMs?: number;
  /** How many cluster proxy requests one tunnel carries at once (default 1000); one more is a 429. */
  clusterTunnelMaxRequests?: number;
  /** How long an AWS endpoint may take to answer a proxied call or the connection test (default 60 s). */
  awsTimeoutMs?: number;
  /** How long a proxied AWS answer's body may go without a chunk before it is cut short (default 30 s). */
  awsBodyIdleMs?: number;
  /** How long a proxied AWS answer's body may take from its headers to its end (default 5 min). */
  awsBodyTimeoutMs?: number;
  /** How long an MCP endpoint's event stream (GET) stays open before it is closed (default 30 min). */
  mcpStreamLifetimeMs?: number;
  /** The outbox relay's poll interval, idle poll ceiling and longest backoff (defaults 250 ms, 2 s, 30 s). */
  eventRelay?: OutboxTuning;
  /** How many connectors, clusters and AWS connections a project may hold (`OBJECT_LIMITS`; defaults otherwise). */
  objectLimits?: ObjectLimits;
}

/** connections-svc's own settings, read the same way by its deployable and the all-in-one launcher. */
export const ConnectionsSettingsSchema = z.object({
  /** This replica's own internal URL (e.g. `http://$(POD_IP):8085`), for proxy forwarding across replicas. */
  CONNECTIONS_REPLICA_URL: z.url().optional(),
  CONNECTIONS_REPLICA_ID: z.string().min(1).optional(),
  CLUSTER_HEARTBEAT_MS: z.coerce.number().int().min(100).default(10_000),
  CLUSTER_JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  /** Comma-separated hosts, host:port pairs or CIDR ranges connectors may reach although internal. */
  CONNECTOR_ALLOWED_HOSTS: z.string().optional(),
  /** How long a cluster proxy request may take before it is a 504; a watch or followed log, until its head. */
  CLUSTER_PROXY_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** How many cluster proxy requests one tunnel carries at once (watches included); one more is a 429. */
  CLUSTER_TUNNEL_MAX_REQUESTS: z.coerce.number().int().min(1).max(100_000).default(1000),
  /** How long an AWS endpoint may take to send its answer's headers before the call is a 504. */
  AWS_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(900_000).default(60_000),
  /** How long a proxied AWS answer's body may go without a chunk before the answer is cut short. */
  AWS_UPSTREAM_BODY_IDLE_MS: z.coerce.number().int().min(100).max(900_000).default(30_000),
  /** How long a proxied AWS answer's body may take, from its headers to its end, before it is cut short. */
  AWS_UPSTREAM_BODY_TIMEOUT_MS: z.coerce.number().int().min(100).max(86_400_000).default(300_000),
  ...ObjectLimitsSettingSchema.shape,
});
export type ConnectionsSettings = z.infer<typeof ConnectionsSettingsSchema>;

/** connections-svc as its own deployable: the deployment variables, the services it calls, its settings. */
export const ConnectionsEnvSchema = deploymentEnv(8085).extend({
  TENANCY_URL: z.url(),
  GOVERNANCE_URL: z.url().optional(),
  /** Where the MCP endpoints' platform tools reach sandboxes and the audit trail. */
  SANDBOX_URL: z.url().optional(),
  AUDIT_URL: z.url().optional(),
  ...ConnectionsSettingsSchema.shape,
});
export type ConnectionsEnv = z.infer<typeof ConnectionsEnvSchema>;

/** connections-svc's configuration from the environment (its settings only; a bad one names the variable). */
export function configFromEnv(env: Record<string, string | undefined>): ConnectionsConfig {
  return configFromSettings(parseEnv(ConnectionsSettingsSchema, env));
}

/** connections-svc's configuration from its parsed settings. */
export function configFromSettings(settings: ConnectionsSettings): ConnectionsConfig {
  return {
    replicaId: settings.CONNECTIONS_REPLICA_ID ?? `conn-${randomBytes(6).toString("hex")}`,
    ...(settings.CONNECTIONS_REPLICA_URL ? { replicaUrl: settings.CONNECTIONS_REPLICA_URL } : {}),
    heartbeatMs: settings.CLUSTER_HEARTBEAT_MS,
    clusterJwtTtlSeconds: settings.CLUSTER_JWT_TTL_SECONDS,
    awsTimeoutMs: settings.AWS_UPSTREAM_TIMEOUT_MS,
    awsBodyIdleMs: settings.AWS_UPSTREAM_BODY_IDLE_MS,
    awsBodyTimeoutMs: settings.AWS_UPSTREAM_BODY_TIMEOUT_MS,
    clusterProxyTimeoutMs: settings.CLUSTER_PROXY_TIMEOUT_MS,
    clusterTunnelMaxRequests: settings.CLUSTER_TUNNEL_MAX_REQUESTS,
    connectors: { allowedHosts: parseAllowedHosts(settings.CONNECTOR_ALLOWED_HOSTS) },
    objectLimits: settings.OBJECT_LIMITS,
  };
}

function parseAllowedHosts(value: string | undefined): string[] {
  // Validated here so a bad entry fails the start with the variable's name.
  try {
    AddressPolicy.fromEnv(value);
  } catch (err) {
    throw new ConfigError([
      { name: "CONNECTOR_ALLOWED_HOSTS", message: (err as Error).message.replace(/^CONNECTOR_ALLOWED_HOSTS: /, "") },
    ]);
  }
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
