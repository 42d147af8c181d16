import { randomBytes } from "node:crypto";
import { parseEnv } from "@agentplane/service-kit";
import { z } from "zod";
import { AddressPolicy } from "./connectors/fetch/index.ts";
import type { ConnectorOptions } from "./connectors/services/runtime.ts";

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
  /** Connectors: `CONNECTOR_ALLOWED_HOSTS` (internal hosts they may reach), scheduler, fetch limits. */
  connectors?: ConnectorOptions;
}

export const ConnectionsEnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8085),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z.string().min(1),
  REDIS_URL: z.string().min(1).optional(),
  INTERNAL_IDENTITY_PUBLIC_KEY: z.string().optional(),
  INTERNAL_IDENTITY_PRIVATE_KEY: z.string().optional(),
  TENANCY_URL: z.url(),
  GOVERNANCE_URL: z.url().optional(),
  /** Where the MCP endpoints' platform tools reach sandboxes and the audit trail. */
  SANDBOX_URL: z.url().optional(),
  AUDIT_URL: z.url().optional(),
  /** This replica's own internal URL (e.g. `http://$(POD_IP):8085`), for proxy forwarding across replicas. */
  CONNECTIONS_REPLICA_URL: z.url().optional(),
  CONNECTIONS_REPLICA_ID: z.string().min(1).optional(),
  CLUSTER_HEARTBEAT_MS: z.coerce.number().int().min(100).default(10_000),
  CLUSTER_JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  LOG_LEVEL: z.string().default("info"),
  /** Comma-separated hosts, host:port pairs or CIDR ranges connectors may reach although internal. */
  CONNECTOR_ALLOWED_HOSTS: z.string().optional(),
});
export type ConnectionsEnv = z.infer<typeof ConnectionsEnvSchema>;

/** Parses the environment (failing fast with the variable's name) into the env and the service config. */
export function configFromEnv(env: Record<string, string | undefined> = process.env): {
  env: ConnectionsEnv;
  config: ConnectionsConfig;
} {
  const parsed = parseEnv(ConnectionsEnvSchema, env);
  return {
    env: parsed,
    config: {
      replicaId: parsed.CONNECTIONS_REPLICA_ID ?? `conn-${randomBytes(6).toString("hex")}`,
      ...(parsed.CONNECTIONS_REPLICA_URL ? { replicaUrl: parsed.CONNECTIONS_REPLICA_URL } : {}),
      heartbeatMs: parsed.CLUSTER_HEARTBEAT_MS,
      clusterJwtTtlSeconds: parsed.CLUSTER_JWT_TTL_SECONDS,
      connectors: { allowedHosts: parseAllowedHosts(parsed.CONNECTOR_ALLOWED_HOSTS) },
    },
  };
}

function parseAllowedHosts(value: string | undefined): string[] {
  // Validated here so a bad entry fails the start with the variable's name.
  AddressPolicy.fromEnv(value);
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
