import { parseEnv } from "@agentplane/service-kit";
import { z } from "zod";
import type { StsConfig } from "./services/credential-resolve.ts";

/** What `createGovernanceService` takes as configuration (`configFromEnv` builds it for main.ts). */
export interface GovernanceConfig {
  /** AGENTPLANE_SECRET_KEY (32 bytes): wraps the data key of every credential. */
  secretKey: Uint8Array;
  /** AGENTPLANE_SECRET_KEY_PREVIOUS: still unwraps records until they are re-wrapped. */
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
  /** Outbox relay poll interval (default 250 ms). */
  eventRelayPollMs?: number;
}

const key32 = (name: string) =>
  z.string().transform((value, ctx) => {
    const key = Buffer.from(value, "base64");
    if (key.length !== 32) ctx.addIssue({ code: "custom", message: `${name} must be 32 bytes, base64-encoded` });
    return key;
  });

export const GovernanceEnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8084),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z.string().min(1),
  REDIS_URL: z.string().min(1).optional(),
  INTERNAL_IDENTITY_PUBLIC_KEY: z.string().optional(),
  INTERNAL_IDENTITY_PRIVATE_KEY: z.string().optional(),
  TENANCY_URL: z.url(),
  /** sandbox-svc, for effective policy and drift (they read sandboxes through its internal API). */
  SANDBOX_URL: z.url().optional(),
  AGENTPLANE_SECRET_KEY: key32("AGENTPLANE_SECRET_KEY"),
  AGENTPLANE_SECRET_KEY_PREVIOUS: key32("AGENTPLANE_SECRET_KEY_PREVIOUS").optional(),
  CREDENTIAL_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).default(3600),
  GOVERNANCE_DRIFT_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(60),
  LOG_LEVEL: z.string().default("info"),
});
export type GovernanceEnv = z.infer<typeof GovernanceEnvSchema>;

/** Parses the environment (failing fast with the variable's name) into the env and the service config. */
export function configFromEnv(env: Record<string, string | undefined> = process.env): {
  env: GovernanceEnv;
  config: GovernanceConfig;
} {
  const parsed = parseEnv(GovernanceEnvSchema, env);
  return {
    env: parsed,
    config: {
      secretKey: parsed.AGENTPLANE_SECRET_KEY,
      ...(parsed.AGENTPLANE_SECRET_KEY_PREVIOUS ? { previousSecretKey: parsed.AGENTPLANE_SECRET_KEY_PREVIOUS } : {}),
      credentialGraceSeconds: parsed.CREDENTIAL_ROTATION_GRACE_SECONDS,
      driftIntervalMs: parsed.GOVERNANCE_DRIFT_INTERVAL_SECONDS * 1000,
    },
  };
}
