import type { ObjectLimits } from "@agentplane/contracts";
import type { OutboxTuning } from "@agentplane/events";
import { deploymentEnv, envKey32, ObjectLimitsSettingSchema, parseEnv } from "@agentplane/service-kit";
import { z } from "zod";

/** How `aws-role` credentials reach STS (the platform's own AWS identity signs AssumeRole). */
export interface StsConfig {
  /** Default: the regional AWS endpoint the SDK picks. */
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** What `createGovernanceService` takes as configuration (`configFromEnv` builds it for main.ts). */
export interface GovernanceConfig {
  /** AGENTPLANE_SECRET_KEY (32 bytes): wraps the data key of every credential. */
  secretKey: Uint8Array;
  /** AGENTPLANE_SECRET_KEY_PREVIOUS, during a master key rotation: the start re-wraps what it wraps. */
  previousSecretKey?: Uint8Array;
  /** How long a rotated-out credential secret stays resolvable (default 3600 s). */
  credentialGraceSeconds?: number;
  /** The background drift audit's period (default 60 s; 0 turns it off). */
  driftIntervalMs?: number;
  /** A cached organization's bindings are re-read after this long even without a change notice (default 60 s). */
  refreshAfterMs?: number;
  /** Replica heartbeat for change notices (default 5 s). */
  heartbeatMs?: number;
  /** How `aws-role` credentials reach STS (default: the SDK's regional endpoint and credential chain). */
  sts?: StsConfig;
  /** The outbox relay's poll interval, idle poll ceiling and longest backoff (defaults 250 ms, 2 s, 30 s). */
  eventRelay?: OutboxTuning;
  /** How many policies, bindings and credentials an organization or project may hold (`OBJECT_LIMITS`). */
  objectLimits?: ObjectLimits;
}

/** governance-svc's own settings, read the same way by its deployable and the all-in-one launcher. */
export const GovernanceSettingsSchema = z.object({
  AGENTPLANE_SECRET_KEY_PREVIOUS: envKey32.optional(),
  CREDENTIAL_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).default(3600),
  GOVERNANCE_DRIFT_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(60),
  ...ObjectLimitsSettingSchema.shape,
});
export type GovernanceSettings = z.infer<typeof GovernanceSettingsSchema>;

/** governance-svc as its own deployable: the deployment variables, the services it calls, the master key, its settings. */
export const GovernanceEnvSchema = deploymentEnv(8084).extend({
  TENANCY_URL: z.url(),
  /** sandbox-svc, for effective policy and drift (they read sandboxes through its internal API). */
  SANDBOX_URL: z.url().optional(),
  AGENTPLANE_SECRET_KEY: envKey32,
  /** The egress proxy's own public key (JWK JSON): its identities, for its egress decisions only (decision 0062). */
  EGRESS_IDENTITY_PUBLIC_KEY: z.string().optional(),
  ...GovernanceSettingsSchema.shape,
});
export type GovernanceEnv = z.infer<typeof GovernanceEnvSchema>;

/**
 * governance-svc's configuration from the environment (its settings only; a bad one names the
 * variable). The launcher decides the master key (the all-in-one keeps one under its data dir).
 */
export function configFromEnv(
  env: Record<string, string | undefined>,
  options: { secretKey: Uint8Array },
): GovernanceConfig {
  return configFromSettings(parseEnv(GovernanceSettingsSchema, env), options);
}

/** governance-svc's configuration from its parsed settings. */
export function configFromSettings(settings: GovernanceSettings, options: { secretKey: Uint8Array }): GovernanceConfig {
  return {
    secretKey: options.secretKey,
    ...(settings.AGENTPLANE_SECRET_KEY_PREVIOUS ? { previousSecretKey: settings.AGENTPLANE_SECRET_KEY_PREVIOUS } : {}),
    credentialGraceSeconds: settings.CREDENTIAL_ROTATION_GRACE_SECONDS,
    driftIntervalMs: settings.GOVERNANCE_DRIFT_INTERVAL_SECONDS * 1000,
    objectLimits: settings.OBJECT_LIMITS,
  };
}
