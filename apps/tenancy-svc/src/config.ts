import { deploymentEnv, parseEnv } from "@agentplane/service-kit";
import { z } from "zod";
import type { TenancyConfig } from "./context.ts";

/**
 * Tenancy's settings from the environment, the same for its own deployable and the all-in-one
 * launcher (which adds them to its schema), so the two read the same variables the same way.
 */
export const TenancySettingsSchema = z.object({
  PUBLIC_URL: z.url().optional(),
  KEY_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).default(86_400),
  AGENTPLANE_BOOTSTRAP_TOKEN: z.string().min(32, "must be at least 32 characters").optional(),
  // Activation approval by signing in at this identity provider (authorization code flow + PKCE).
  OIDC_ISSUER: z.url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_REDIRECT_URI: z.url().optional(),
});
export type TenancySettings = z.infer<typeof TenancySettingsSchema>;

/** Tenancy as its own deployable: the deployment variables, the master key and its settings. */
export const TenancyEnvSchema = deploymentEnv(8081)
  .extend({
    AGENTPLANE_SECRET_KEY: z
      .string()
      .refine((v) => Buffer.from(v, "base64").length === 32, "must be 32 bytes, base64-encoded"),
    ...TenancySettingsSchema.shape,
  })
  // Alone, tenancy reads OIDC_ISSUER only for sign-in, so an issuer without a client is a mistake.
  .refine((env) => !oidcSignInGap(env), {
    message: "OIDC_CLIENT_ID is required when OIDC_ISSUER is set",
    path: ["OIDC_CLIENT_ID"],
  })
  .refine((env) => env.INTERNAL_IDENTITY_PUBLIC_KEY || env.INTERNAL_IDENTITY_PRIVATE_KEY, {
    message: "INTERNAL_IDENTITY_PUBLIC_KEY or INTERNAL_IDENTITY_PRIVATE_KEY is required",
    path: ["INTERNAL_IDENTITY_PUBLIC_KEY"],
  });
export type TenancyEnv = z.infer<typeof TenancyEnvSchema>;

/**
 * Tenancy's configuration from the environment (its settings only; a bad one fails with the
 * variable's name). The launcher decides the master key and, when it knows it, the public URL.
 */
export function configFromEnv(
  env: Record<string, string | undefined>,
  options: { secretKey: Uint8Array; publicUrl?: string },
): TenancyConfig {
  return configFromSettings(parseEnv(TenancySettingsSchema, env), options);
}

/**
 * Tenancy's configuration from its parsed settings. `publicUrl` is where the platform is reached when
 * PUBLIC_URL is not set (the all-in-one launcher knows its own port; a lone tenancy does not, and
 * then builds activation links from the gateway's forwarded address).
 */
export function configFromSettings(
  env: TenancySettings,
  options: { secretKey: Uint8Array; publicUrl?: string },
): TenancyConfig {
  return {
    secretKey: options.secretKey,
    publicUrl: env.PUBLIC_URL ?? options.publicUrl ?? "http://localhost:8080",
    ...(env.PUBLIC_URL || options.publicUrl ? {} : { publicUrlFromRequest: true }),
    keyRotationGraceSeconds: env.KEY_ROTATION_GRACE_SECONDS,
    ...(env.AGENTPLANE_BOOTSTRAP_TOKEN ? { bootstrapToken: env.AGENTPLANE_BOOTSTRAP_TOKEN } : {}),
    ...(env.OIDC_ISSUER && env.OIDC_CLIENT_ID
      ? {
          oidc: {
            issuer: env.OIDC_ISSUER,
            clientId: env.OIDC_CLIENT_ID,
            ...(env.OIDC_CLIENT_SECRET ? { clientSecret: env.OIDC_CLIENT_SECRET } : {}),
            ...(env.OIDC_REDIRECT_URI ? { redirectUri: env.OIDC_REDIRECT_URI } : {}),
          },
        }
      : {}),
  };
}

/** Why OIDC sign-in for activation is off although an issuer is set, or undefined. */
export function oidcSignInGap(env: TenancySettings): string | undefined {
  return env.OIDC_ISSUER && !env.OIDC_CLIENT_ID
    ? "OIDC_ISSUER is set without OIDC_CLIENT_ID: activation by signing in with the identity provider is off"
    : undefined;
}
