import type { Bus, Outbox } from "@agentplane/events";
import type { Logger } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { LocalAuthorizer } from "./authz/local-authorizer.ts";
import type { TenancyDatabase } from "./db/schema.ts";
import type { OidcActivation } from "./services/oidc-activation.ts";

export interface TenancyConfig {
  /** 32 bytes: encrypts private signing keys and the one-time activation token at rest. */
  secretKey: Uint8Array;
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
   * for rows (default 250 ms) and the longest wait between attempts while the bus is down (30 s).
   */
  eventRelay?: { pollIntervalMs?: number; maxBackoffMs?: number };
  /** OIDC_ISSUER etc.: lets the operator approve the activation by signing in with the identity provider. */
  oidc?: OidcConfig;
}

export interface OidcConfig {
  /** Issuer URL; its discovery document is `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  /** Confidential clients send it to the token endpoint (client_secret_post); public clients rely on PKCE alone. */
  clientSecret?: string;
  /** Where the identity provider sends the operator back (default `${publicUrl}/activate/callback`). */
  redirectUri?: string;
}

export interface ResolvedTenancyConfig extends TenancyConfig {
  version: string;
  keyRotationGraceSeconds: number;
  activationTtlSeconds: number;
  activationIntervalSeconds: number;
  invitationTtlSeconds: number;
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
  };
}

/** What every route and service verb of tenancy works with. */
export interface TenancyContext {
  db: Kysely<TenancyDatabase>;
  bus: Bus;
  /** Domain audit events are written here inside the transaction of the change they describe. */
  outbox: Outbox;
  /** Asks the relay to publish now rather than at its next poll (call after a commit). */
  relaySoon(): void;
  logger: Logger;
  config: ResolvedTenancyConfig;
  authorizer: LocalAuthorizer;
  /** Set when an OIDC issuer is configured: activation approval by signing in there. */
  oidc?: OidcActivation;
}
