import type { ObjectLimits } from "@agentplane/contracts";
import type { OutboxTuning } from "@agentplane/events";
import {
  deploymentEnv,
  envKey32,
  ObjectLimitsSettingSchema,
  type OidcEmailTrust,
  OidcEmailTrustSchema,
  objectLimitsOr,
  parseEnv,
} from "@agentplane/service-kit";
import { z } from "zod";
import type { SecretKeys } from "./crypto/secret-box.ts";

/**
 * Tenancy's settings from the environment, the same for its own deployable and the all-in-one
 * launcher (which adds them to its schema), so the two read the same variables the same way.
 */
export const TenancySettingsSchema = z.object({
  PUBLIC_URL: z.url().optional(),
  KEY_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).default(86_400),
  /** The master key being rotated out: what it sealed is re-sealed under AGENTPLANE_SECRET_KEY at start. */
  AGENTPLANE_SECRET_KEY_PREVIOUS: envKey32.optional(),
  AGENTPLANE_BOOTSTRAP_TOKEN: z.string().min(32, "must be at least 32 characters").optional(),
  // Activation approval by signing in at this identity provider (authorization code flow + PKCE).
  OIDC_ISSUER: z.url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_REDIRECT_URI: z.url().optional(),
  /** Which email of an OIDC sign-in is the user's address: `verified` (`email_verified: true` only) or `present`. */
  OIDC_EMAIL_TRUST: OidcEmailTrustSchema,
  ...ObjectLimitsSettingSchema.shape,
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
    ...(env.AGENTPLANE_SECRET_KEY_PREVIOUS ? { previousSecretKey: env.AGENTPLANE_SECRET_KEY_PREVIOUS } : {}),
    publicUrl: env.PUBLIC_URL ?? options.publicUrl ?? "http://localhost:8080",
    ...(env.PUBLIC_URL || options.publicUrl ? {} : { publicUrlFromRequest: true }),
    keyRotationGraceSeconds: env.KEY_ROTATION_GRACE_SECONDS,
    objectLimits: env.OBJECT_LIMITS,
    ...(env.AGENTPLANE_BOOTSTRAP_TOKEN ? { bootstrapToken: env.AGENTPLANE_BOOTSTRAP_TOKEN } : {}),
    ...(env.OIDC_ISSUER && env.OIDC_CLIENT_ID
      ? {
          oidc: {
            issuer: env.OIDC_ISSUER,
            clientId: env.OIDC_CLIENT_ID,
            ...(env.OIDC_CLIENT_SECRET ? { clientSecret: env.OIDC_CLIENT_SECRET } : {}),
            ...(env.OIDC_REDIRECT_URI ? { redirectUri: env.OIDC_REDIRECT_URI } : {}),
            emailTrust: env.OIDC_EMAIL_TRUST,
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

export interface TenancyConfig {
  /** 32 bytes: encrypts private signing keys and the one-time activation token at rest. */
  secretKey: Uint8Array;
  /**
   * AGENTPLANE_SECRET_KEY_PREVIOUS, during a master key rotation: the start re-seals everything it
   * sealed under `secretKey`, and it still opens rows until then; afterwards it can be removed.
   */
  previousSecretKey?: Uint8Array;
  /** Where operators reach the platform; the activation page is `${publicUrl}/activate`. */
  publicUrl: string;
  /**
   * True when PUBLIC_URL was not configured: activation links then use the address the caller
   * reached the gateway at (`x-forwarded-host`/`-proto`, which the gateway sets), so they name the
   * right port; `publicUrl` is only the fallback.
   */
  publicUrlFromRequest?: boolean;
  /** Reported by `GET /v1/installation`. */
  version?: string;
  /** How long a rotated-out key stays published (default 86400). */
  keyRotationGraceSeconds?: number;
  /** AGENTPLANE_BOOTSTRAP_TOKEN: activate at first start and accept this string as the owner's token. */
  bootstrapToken?: string;
  /** Device flow session lifetime (default 600) and poll interval (default 5). */
  activationTtlSeconds?: number;
  activationIntervalSeconds?: number;
  /** Invitation lifetime (default 7 days). */
  invitationTtlSeconds?: number;
  /**
   * The relay that moves domain audit events from the outbox table to the bus: how often it looks
   * for rows (default 250 ms), the interval that grows to while it finds none (up to 2 s), and the
   * longest wait between attempts while the bus is down (30 s).
   */
  eventRelay?: OutboxTuning;
  /** OIDC_ISSUER etc.: lets the operator approve the activation by signing in with the identity provider. */
  oidc?: OidcConfig;
  /** How many projects, teams, API tokens and invitations an organization may hold (`OBJECT_LIMITS`). */
  objectLimits?: ObjectLimits;
  /** Between prunes of long-expired device sign-ins and browser sessions (default one hour; 0: none). */
  signInPruneIntervalMs?: number;
}

export interface OidcConfig {
  /** Issuer URL; its discovery document is `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  /** Confidential clients send it to the token endpoint (client_secret_post); public clients rely on PKCE alone. */
  clientSecret?: string;
  /** Where the identity provider sends the operator back (default `${publicUrl}/activate/callback`). */
  redirectUri?: string;
  /** OIDC_EMAIL_TRUST: which email of an ID token is the user's address (default `verified`). */
  emailTrust?: OidcEmailTrust;
}

export interface ResolvedTenancyConfig extends TenancyConfig {
  version: string;
  keyRotationGraceSeconds: number;
  activationTtlSeconds: number;
  activationIntervalSeconds: number;
  invitationTtlSeconds: number;
  objectLimits: ObjectLimits;
}

/** The keys that open what tenancy sealed: the master key, then the one being rotated out. */
export function secretKeysOf(config: TenancyConfig): SecretKeys {
  return { current: config.secretKey, previous: config.previousSecretKey };
}

export function resolveConfig(config: TenancyConfig): ResolvedTenancyConfig {
  if (config.bootstrapToken !== undefined && config.bootstrapToken.length < 32) {
    throw new Error("AGENTPLANE_BOOTSTRAP_TOKEN must be at least 32 characters");
  }
  if (config.oidc) {
    if (!URL.canParse(config.oidc.issuer)) throw new Error("OIDC_ISSUER must be a URL");
    if (!config.oidc.clientId) throw new Error("OIDC_CLIENT_ID is required when OIDC_ISSUER is set");
  }
  return {
    ...config,
    publicUrl: config.publicUrl.replace(/\/+$/, ""),
    version: config.version ?? "0.1.0",
    keyRotationGraceSeconds: config.keyRotationGraceSeconds ?? 86_400,
    activationTtlSeconds: config.activationTtlSeconds ?? 600,
    activationIntervalSeconds: config.activationIntervalSeconds ?? 5,
    invitationTtlSeconds: config.invitationTtlSeconds ?? 7 * 86_400,
    objectLimits: objectLimitsOr(config.objectLimits),
  };
}
