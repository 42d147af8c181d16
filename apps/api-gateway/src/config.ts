import { z } from "zod";

/** Gateway settings; `main.ts` fills them from the environment, the launcher from its own config. */
export const GatewayEnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default("0.0.0.0"),
  PUBLIC_URL: z.url().optional(),
  OIDC_ISSUER: z.url().optional(),
  OIDC_AUDIENCE: z.string().optional(),
  /** How far an OIDC token's `iat` may be ahead of this host's clock. */
  OIDC_MAX_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  REDIS_URL: z.string().optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  INTERNAL_IDENTITY_PRIVATE_KEY: z.string(),
  TENANCY_URL: z.url(),
  SANDBOX_URL: z.url().optional(),
  AUDIT_URL: z.url().optional(),
  GOVERNANCE_URL: z.url().optional(),
  CONNECTIONS_URL: z.url().optional(),
  INFERENCE_URL: z.url().optional(),
  SANDBOX_INGRESS_HOST: z.string().optional(),
  LOG_LEVEL: z.string().optional(),
});
export type GatewayEnv = z.infer<typeof GatewayEnvSchema>;

export interface RateLimitConfig {
  /** Requests per token per window. */
  limit: number;
  windowSeconds: number;
}
