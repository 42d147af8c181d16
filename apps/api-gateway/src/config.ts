import type { ServiceName } from "@agentplane/contracts";
import {
  ConfigError,
  LogLevelSchema,
  type OidcEmailTrust,
  OidcEmailTrustSchema,
  parseEnv,
  SERVICE_SHUTDOWN,
  shutdownDelayMs,
  shutdownDrainMs,
} from "@agentplane/service-kit";
import { TelemetryEnvSchema } from "@agentplane/telemetry";
import { z } from "zod";
import { parseTrustedProxies } from "./client-address.ts";

/** The gateway's own settings, read the same way by its deployable and the all-in-one launcher. */
export const GatewaySettingsSchema = z.object({
  PUBLIC_URL: z.url().optional(),
  /** Bearer JWTs of this identity provider are accepted (discovery at `<issuer>/.well-known/openid-configuration`). */
  OIDC_ISSUER: z.url().optional(),
  /** The `aud` an OIDC token must carry (any when unset). */
  OIDC_AUDIENCE: z.string().optional(),
  /** How far an OIDC token's `iat` may be ahead of this host's clock. */
  OIDC_MAX_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  /** Which email of an OIDC token is its user's address: `verified` (`email_verified: true` only) or `present`. */
  OIDC_EMAIL_TRUST: OidcEmailTrustSchema,
  /** Shared rate-limit counters (per-process memory when unset). */
  REDIS_URL: z.string().optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  /**
   * Requests per minute of all of a user's tokens and sessions together (default 4 ×
   * RATE_LIMIT_PER_MINUTE); at least RATE_LIMIT_PER_MINUTE.
   */
  RATE_LIMIT_PER_USER_PER_MINUTE: z.coerce.number().int().min(1).optional(),
  SANDBOX_INGRESS_HOST: z.string().optional(),
  /**
   * How long the gateway waits for the agent runtime to start answering a request at /agent (a
   * turn asked for without streaming answers when it ends); past it, a 504 problem.
   */
  AGENT_RUNTIME_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(300_000),
  /**
   * Proxies in front of the gateway (addresses or CIDR ranges, comma-separated) whose
   * X-Forwarded-For names the client, for per-address rate limits and audit records.
   */
  TRUSTED_PROXIES: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      try {
        if (value) parseTrustedProxies(value);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    }),
});
export type GatewaySettings = z.infer<typeof GatewaySettingsSchema>;

/** The gateway as its own deployable: where it listens, its signing key, the services' URLs, its settings. */
export const GatewayEnvSchema = GatewaySettingsSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default("0.0.0.0"),
  SHUTDOWN_DELAY_MS: shutdownDelayMs(SERVICE_SHUTDOWN.delayMs),
  SHUTDOWN_DRAIN_MS: shutdownDrainMs(SERVICE_SHUTDOWN.drainMs),
  INTERNAL_IDENTITY_PRIVATE_KEY: z.string(),
  TENANCY_URL: z.url(),
  SANDBOX_URL: z.url().optional(),
  AUDIT_URL: z.url().optional(),
  GOVERNANCE_URL: z.url().optional(),
  CONNECTIONS_URL: z.url().optional(),
  INFERENCE_URL: z.url().optional(),
  LOG_LEVEL: LogLevelSchema.optional(),
  ...TelemetryEnvSchema.shape,
  /** The agent runtime fronted at /agent (its UI, its API for the project's members, its webhooks). */
  AGENT_RUNTIME_URL: z.url().optional(),
  /** The project whose members may use that runtime (`agent:read`, `agent:chat`, `agent:manage`). */
  AGENT_RUNTIME_PROJECT_ID: z.string().min(1).optional(),
});
export type GatewayEnv = z.infer<typeof GatewayEnvSchema>;

/** What `buildGateway` takes as configuration, in both modes. */
export interface GatewayConfig {
  /** Where clients reach the platform (activation links, resource metadata). */
  publicUrl?: string;
  /** `emailTrust`: OIDC_EMAIL_TRUST (default `verified`). */
  oidc?: { issuer: string; audience?: string; maxClockSkewSeconds: number; emailTrust?: OidcEmailTrust };
  redisUrl?: string;
  rateLimitPerMinute: number;
  /** RATE_LIMIT_PER_USER_PER_MINUTE when set (else a multiple of `rateLimitPerMinute`). */
  rateLimitPerUserPerMinute?: number;
  /** Host-based ingress to exposed sandbox ports. */
  ingressHost?: string;
  /** How long the agent runtime at /agent may take to start answering. */
  agentRuntimeTimeoutMs: number;
  /** TRUSTED_PROXIES as given (validated): proxies whose X-Forwarded-For names the client. */
  trustedProxies?: string;
}

/** The gateway's configuration from the environment (its settings only; a bad one names the variable). */
export function configFromEnv(env: Record<string, string | undefined>): GatewayConfig {
  return configFromSettings(parseEnv(GatewaySettingsSchema, env));
}

/** The gateway's configuration from its parsed settings. */
export function configFromSettings(settings: GatewaySettings): GatewayConfig {
  const perUser = settings.RATE_LIMIT_PER_USER_PER_MINUTE;
  if (perUser !== undefined && perUser < settings.RATE_LIMIT_PER_MINUTE) {
    throw new ConfigError([
      {
        name: "RATE_LIMIT_PER_USER_PER_MINUTE",
        message: `must be at least RATE_LIMIT_PER_MINUTE (${settings.RATE_LIMIT_PER_MINUTE}): a user's tokens together get no less than one of them`,
      },
    ]);
  }
  return {
    ...(settings.PUBLIC_URL ? { publicUrl: settings.PUBLIC_URL } : {}),
    ...(settings.OIDC_ISSUER
      ? {
          oidc: {
            issuer: settings.OIDC_ISSUER,
            ...(settings.OIDC_AUDIENCE ? { audience: settings.OIDC_AUDIENCE } : {}),
            maxClockSkewSeconds: settings.OIDC_MAX_CLOCK_SKEW_SECONDS,
            emailTrust: settings.OIDC_EMAIL_TRUST,
          },
        }
      : {}),
    ...(settings.REDIS_URL ? { redisUrl: settings.REDIS_URL } : {}),
    rateLimitPerMinute: settings.RATE_LIMIT_PER_MINUTE,
    ...(perUser !== undefined ? { rateLimitPerUserPerMinute: perUser } : {}),
    agentRuntimeTimeoutMs: settings.AGENT_RUNTIME_TIMEOUT_MS,
    ...(settings.TRUSTED_PROXIES?.trim() ? { trustedProxies: settings.TRUSTED_PROXIES } : {}),
    ...(settings.SANDBOX_INGRESS_HOST ? { ingressHost: settings.SANDBOX_INGRESS_HOST } : {}),
  };
}

/** The distributed gateway's service URLs by service name. */
export function serviceUrls(env: GatewayEnv): Partial<Record<ServiceName, string>> {
  const urls: Partial<Record<ServiceName, string | undefined>> = {
    tenancy: env.TENANCY_URL,
    sandbox: env.SANDBOX_URL,
    audit: env.AUDIT_URL,
    governance: env.GOVERNANCE_URL,
    connections: env.CONNECTIONS_URL,
    inference: env.INFERENCE_URL,
  };
  return Object.fromEntries(Object.entries(urls).filter(([, url]) => url)) as Partial<Record<ServiceName, string>>;
}

export interface RateLimitConfig {
  /** Requests per token per window. */
  limit: number;
  windowSeconds: number;
}
