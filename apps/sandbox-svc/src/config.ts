import { deploymentEnv, ObjectLimitsSettingSchema, parseEnv } from "@agentplane/service-kit";
import { z } from "zod";
import type { SandboxConfig } from "./app.ts";
import { KubernetesSettingsSchema, kubernetesConfigFrom } from "./driver/kubernetes/config.ts";
import { DEFAULT_SANDBOX_HOST_UID, identityBesidesHostUser } from "./driver/local/host-user.ts";
import { holdsSysAdmin } from "./driver/local/namespaces.ts";
import {
  DEFAULT_EGRESS_ATTEMPT_BURST,
  DEFAULT_EGRESS_ATTEMPT_RATE,
  DEFAULT_EGRESS_IDLE_TIMEOUT_MS,
} from "./egress/bounds.ts";
import type { EgressLimits } from "./egress/proxy.ts";

/**
 * `SANDBOX_IMAGES_JSON`: the local driver's image catalog, `{"<name>": "<root filesystem dir>"}`.
 * Exported so every launcher that embeds the service parses it the same way.
 */
export const SandboxImagesJsonSchema = z.string().transform((s, ctx) => {
  try {
    return z.record(z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/), z.string().startsWith("/")).parse(JSON.parse(s));
  } catch {
    ctx.addIssue({
      code: "custom",
      message: 'a JSON object of image name → absolute directory, e.g. {"debian":"/srv/debian"}',
    });
    return z.NEVER;
  }
});

/**
 * `SANDBOX_EGRESS_HOST_MAP` (tests only): `{"<name>[:<port>]": "<address>[:<port>]"}`, so local
 * servers stand in for internet hosts behind the egress proxy. Policies still see `<name>`.
 */
export const SandboxEgressHostMapSchema = z.string().transform((s, ctx) => {
  try {
    return z
      .record(z.string().regex(/^[a-z0-9._-]+(:\d{1,5})?$/), z.string().regex(/^[0-9a-fA-F.:[\]]+?(:\d{1,5})?$/))
      .parse(JSON.parse(s));
  } catch {
    ctx.addIssue({
      code: "custom",
      message: 'a JSON object of host[:port] → address[:port], e.g. {"registry.test":"127.0.0.1:8080"}',
    });
    return z.NEVER;
  }
});

/** The egress proxy's bounds per sandbox, in sandbox-svc and in the egress deployable alike. */
export const EgressLimitsSettingsSchema = z.object({
  /** A connection through the egress proxy with no byte either way for this long is ended (5 min). */
  SANDBOX_EGRESS_IDLE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(86_400_000)
    .default(DEFAULT_EGRESS_IDLE_TIMEOUT_MS),
  /** New egress connection attempts one sandbox may make per second, sustained (50). */
  SANDBOX_EGRESS_ATTEMPTS_PER_SECOND: z.coerce.number().int().min(1).max(10_000).default(DEFAULT_EGRESS_ATTEMPT_RATE),
  /** Attempts one sandbox may make at once before the per-second rate applies (200). */
  SANDBOX_EGRESS_ATTEMPT_BURST: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_EGRESS_ATTEMPT_BURST),
});
export type EgressLimitsSettings = z.infer<typeof EgressLimitsSettingsSchema>;

/** The proxy's options for these settings. */
export function egressLimitsFrom(settings: EgressLimitsSettings): EgressLimits {
  return {
    idleTimeoutMs: settings.SANDBOX_EGRESS_IDLE_TIMEOUT_MS,
    attemptRate: settings.SANDBOX_EGRESS_ATTEMPTS_PER_SECOND,
    attemptBurst: settings.SANDBOX_EGRESS_ATTEMPT_BURST,
  };
}

/** sandbox-svc's own settings, read the same way by its deployable and the all-in-one launcher. */
export const SandboxSettingsSchema = z.object({
  /** Workspaces and runtime files of the local driver (default ./.agentplane/sandboxes). */
  SANDBOX_DATA_DIR: z.string().min(1).optional(),
  SANDBOX_INGRESS_HOST: z.string().optional(),
  /** How long an exposed port may take to answer once the request is sent, before a 504. */
  SANDBOX_INGRESS_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** How many connections one sandbox's exposed ports may have open through the ingress at once. */
  SANDBOX_INGRESS_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(100_000).default(256),
  /** The platform's URL as sandboxes reach it (their `AGENTPLANE_API_URL`). */
  AGENTPLANE_API_URL: z.url().optional(),
  SANDBOX_LOCAL_ISOLATION: z.enum(["bwrap", "none"]).optional(),
  /** The host uid a root service runs local sandboxes as (0: root, without capabilities). */
  SANDBOX_HOST_UID: z.coerce.number().int().min(0).max(4_294_967_294).optional(),
  SANDBOX_IMAGES_JSON: SandboxImagesJsonSchema.optional(),
  /** Tests only: egress host names → local stand-ins (`{"registry.test":"127.0.0.1:8080"}`). */
  SANDBOX_EGRESS_HOST_MAP: SandboxEgressHostMapSchema.optional(),
  /** How long repeats of one egress refusal are counted into one audit record instead of one each (60 s). */
  SANDBOX_EGRESS_REFUSAL_WINDOW_MS: z.coerce.number().int().min(1).max(3_600_000).optional(),
  ...EgressLimitsSettingsSchema.shape,
  /** Where sandboxes run: `local` (bubblewrap on this host, the default) or `kubernetes` (Pods). */
  SANDBOX_DRIVER: z.enum(["local", "kubernetes"]).optional(),
  ...KubernetesSettingsSchema.shape,
  ...ObjectLimitsSettingSchema.shape,
});
export type SandboxSettings = z.infer<typeof SandboxSettingsSchema>;

/** sandbox-svc as its own deployable: the deployment variables, the services it calls, its settings. */
export const SandboxEnvSchema = deploymentEnv(8082).extend({
  TENANCY_URL: z.url(),
  /** governance-svc: admission, exec and egress decisions (without it nothing is enforced and sandboxes have no egress). */
  GOVERNANCE_URL: z.url().optional(),
  /**
   * The egress proxy's own public key (JWK JSON): its identities, for a sandbox's egress facts and
   * its refusal records only (decision 0065). Unset: an egress proxy with its own key is refused.
   */
  EGRESS_IDENTITY_PUBLIC_KEY: z.string().optional(),
  ...SandboxSettingsSchema.shape,
});
export type SandboxEnv = z.infer<typeof SandboxEnvSchema>;

/**
 * The launcher's defaults where a setting is unset: the all-in-one keeps sandboxes under its data
 * dir and knows its own public URL.
 */
export interface SandboxConfigDefaults {
  dataDir?: string;
  apiUrl?: string;
}

/** sandbox-svc's configuration from the environment (its settings only; a bad one names the variable). */
export function configFromEnv(
  env: Record<string, string | undefined>,
  defaults: SandboxConfigDefaults = {},
): SandboxConfig {
  return configFromSettings(parseEnv(SandboxSettingsSchema, env), defaults);
}

/** sandbox-svc's configuration from its parsed settings. */
export function configFromSettings(settings: SandboxSettings, defaults: SandboxConfigDefaults = {}): SandboxConfig {
  const apiUrl = settings.AGENTPLANE_API_URL ?? defaults.apiUrl;
  return {
    dataDir: settings.SANDBOX_DATA_DIR ?? defaults.dataDir ?? "./.agentplane/sandboxes",
    ...(settings.SANDBOX_LOCAL_ISOLATION ? { isolation: settings.SANDBOX_LOCAL_ISOLATION } : {}),
    ...(settings.SANDBOX_HOST_UID !== undefined ? { hostUid: settings.SANDBOX_HOST_UID } : {}),
    ...(settings.SANDBOX_IMAGES_JSON ? { images: settings.SANDBOX_IMAGES_JSON } : {}),
    ...(settings.SANDBOX_INGRESS_HOST ? { ingressHost: settings.SANDBOX_INGRESS_HOST } : {}),
    ingressTimeoutMs: settings.SANDBOX_INGRESS_TIMEOUT_MS,
    ingressMaxConnections: settings.SANDBOX_INGRESS_MAX_CONNECTIONS,
    objectLimits: settings.OBJECT_LIMITS,
    ...(apiUrl ? { apiUrl } : {}),
    ...(settings.SANDBOX_EGRESS_HOST_MAP ? { egressHostMap: settings.SANDBOX_EGRESS_HOST_MAP } : {}),
    ...(settings.SANDBOX_EGRESS_REFUSAL_WINDOW_MS
      ? { egressRefusalWindowMs: settings.SANDBOX_EGRESS_REFUSAL_WINDOW_MS }
      : {}),
    egressLimits: egressLimitsFrom(settings),
    ...(settings.SANDBOX_DRIVER === "kubernetes"
      ? { driver: "kubernetes" as const, kubernetes: kubernetesConfigFrom(settings) }
      : {}),
  };
}

/**
 * Whether local sandboxes with these settings run as a host user of their own, as far as settings,
 * privileges and the kernel say (the driver also needs their directories searchable by that user:
 * a launcher that keeps them in a closed directory of its own opens it to searching).
 */
export function sandboxesRunAsOwnHostUser(settings: SandboxSettings): boolean {
  return (
    settings.SANDBOX_DRIVER !== "kubernetes" &&
    settings.SANDBOX_LOCAL_ISOLATION !== "none" &&
    identityBesidesHostUser(holdsSysAdmin(), settings.SANDBOX_HOST_UID ?? DEFAULT_SANDBOX_HOST_UID) === undefined
  );
}
