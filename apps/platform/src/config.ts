import { resolve } from "node:path";
import { GatewaySettingsSchema } from "@agentplane/api-gateway";
import { AuditSettingsSchema } from "@agentplane/audit-svc";
import { ConnectionsSettingsSchema } from "@agentplane/connections-svc";
import { GovernanceSettingsSchema } from "@agentplane/governance-svc";
import { ProviderEnvSchema } from "@agentplane/inference-proxy";
import { SandboxSettingsSchema } from "@agentplane/sandbox-svc";
import {
  envBoolean,
  keepAliveTimeoutMs,
  LogLevelSchema,
  shutdownDelayMs,
  shutdownDrainMs,
} from "@agentplane/service-kit";
import { TelemetryEnvSchema } from "@agentplane/telemetry";
import { TenancySettingsSchema } from "@agentplane/tenancy-svc";
import { z } from "zod";

/**
 * Settings of the all-in-one launcher (`npm start`): every service's own settings, read as that
 * service reads them when it runs alone, plus where this process listens and keeps its data.
 */
export const AllInOneEnvSchema = z.object({
  ...TenancySettingsSchema.shape,
  ...GatewaySettingsSchema.shape,
  ...SandboxSettingsSchema.shape,
  ...AuditSettingsSchema.shape,
  ...GovernanceSettingsSchema.shape,
  ...ConnectionsSettingsSchema.shape,
  ...ProviderEnvSchema.shape,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default("0.0.0.0"),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: keepAliveTimeoutMs,
  /**
   * Run by hand, Ctrl-C stops it without a delay (no endpoints controller to wait for) and waits
   * up to 5 s for requests in flight; in a container behind a balancer, set the delay as the
   * distributed services have it (5000).
   */
  SHUTDOWN_DELAY_MS: shutdownDelayMs(0),
  SHUTDOWN_DRAIN_MS: shutdownDrainMs(5_000),
  AGENTPLANE_DATA_DIR: z.string().default("./.agentplane"),
  DATABASE_URL: z.string().optional(),
  /** The master key (32 bytes, base64); generated under the data dir when unset. */
  AGENTPLANE_SECRET_KEY: z.string().optional(),
  AGENT_RUNTIME: envBoolean.prefault("on"),
  AGENT_RUNTIME_PORT: z.coerce.number().int().min(0).max(65535).default(3003),
  /** The runtime binds loopback natively; the container image sets 0.0.0.0. */
  AGENT_RUNTIME_HOST: z.string().default("127.0.0.1"),
  LOG_LEVEL: LogLevelSchema.default("info"),
  ...TelemetryEnvSchema.shape,
});
export type AllInOneEnv = z.infer<typeof AllInOneEnvSchema>;
/** What the launcher's schema accepts (tests and benchmarks build it from a few variables). */
export type AllInOneEnvInput = z.input<typeof AllInOneEnvSchema>;

export function dataDirOf(env: AllInOneEnv): string {
  return resolve(env.AGENTPLANE_DATA_DIR);
}
