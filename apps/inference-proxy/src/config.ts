import { deploymentEnv, parseEnv } from "@agentplane/service-kit";
import { z } from "zod";
import type { SpendGateOptions } from "./proxy/spend.ts";

/** Installation-wide provider credentials, from the control plane's environment (the runtime's names). */
export type CloudACredential =
  | { kind: "bearer"; token: string }
  | { kind: "sigv4"; accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };

export interface ProviderSettings {
  cloudA?: CloudACredential | undefined;
  /** The default region (CLOUD_A_REGION), listed first by `/v1/inference/providers`. */
  cloudARegion: string;
  /** CLOUD_B_API_KEY; with CLOUD_B_RESOURCE_NAME (or an endpoint override) it makes cloud-b usable. */
  cloudBKey?: string | undefined;
  cloudBResource?: string | undefined;
  /** Endpoint overrides (tests, private endpoints); unset means the vendors' public hosts. */
  cloudAEndpointUrl?: string | undefined;
  cloudAAltBaseUrl?: string | undefined;
  cloudBBaseUrl?: string | undefined;
  cloudBOpenAiBaseUrl?: string | undefined;
}

export interface InferenceConfig {
  providers: ProviderSettings;
  /** Request bodies above this answer 413 (default 20 MiB). */
  maxBodyBytes?: number;
  /** Time to the upstream's response headers (default 5 minutes). */
  headersTimeoutMs?: number;
  /** How long audit's "no limit applies here" is trusted, and the clock that times it (tests). */
  spend?: SpendGateOptions;
}

const optional = z
  .string()
  .optional()
  .transform((v) => (v?.trim() ? v.trim() : undefined));

/** The provider variables, shared by the distributed `main.ts` and the all-in-one launcher. */
export const ProviderEnvSchema = z.object({
  CLOUD_A_BEARER_TOKEN: optional,
  CLOUD_A_ACCESS_KEY_ID: optional,
  CLOUD_A_SECRET_ACCESS_KEY: optional,
  CLOUD_A_SESSION_TOKEN: optional,
  CLOUD_A_REGION: optional.transform((v) => v ?? "us-east-1"),
  CLOUD_B_API_KEY: optional,
  CLOUD_B_RESOURCE_NAME: optional,
  CLOUD_A_ENDPOINT_URL: optional.pipe(z.url().optional()),
  CLOUD_A_ALT_BASE_URL: optional.pipe(z.url().optional()),
  CLOUD_B_BASE_URL: optional.pipe(z.url().optional()),
  CLOUD_B_OPENAI_BASE_URL: optional.pipe(z.url().optional()),
  INFERENCE_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(20 * 1024 * 1024),
});

/** inference-proxy as its own deployable: the deployment variables, the services it calls, its settings. */
export const InferenceEnvSchema = deploymentEnv(8086).extend({
  ...ProviderEnvSchema.shape,
  TENANCY_URL: z.url(),
  AUDIT_URL: z.url(),
  GOVERNANCE_URL: z.url().optional(),
  PRICE_TABLE_JSON: z.string().optional(),
});
export type InferenceEnv = z.infer<typeof InferenceEnvSchema>;
export type InferenceSettings = z.infer<typeof ProviderEnvSchema>;

/** Builds the service configuration from environment variables (unknown ones are ignored; a bad one names the variable). */
export function configFromEnv(env: Record<string, string | undefined>): InferenceConfig {
  return configFromSettings(parseEnv(ProviderEnvSchema, env));
}

/** The service configuration from the parsed provider settings. */
export function configFromSettings(e: InferenceSettings): InferenceConfig {
  let cloudA: CloudACredential | undefined;
  // Bearer auth is chosen automatically when the token is set (spec), as in the runtime.
  if (e.CLOUD_A_BEARER_TOKEN) cloudA = { kind: "bearer", token: e.CLOUD_A_BEARER_TOKEN };
  else if (e.CLOUD_A_ACCESS_KEY_ID && e.CLOUD_A_SECRET_ACCESS_KEY) {
    cloudA = {
      kind: "sigv4",
      accessKeyId: e.CLOUD_A_ACCESS_KEY_ID,
      secretAccessKey: e.CLOUD_A_SECRET_ACCESS_KEY,
      sessionToken: e.CLOUD_A_SESSION_TOKEN,
    };
  }
  return {
    providers: {
      cloudA,
      cloudARegion: e.CLOUD_A_REGION,
      cloudBKey: e.CLOUD_B_API_KEY,
      cloudBResource: e.CLOUD_B_RESOURCE_NAME,
      cloudAEndpointUrl: e.CLOUD_A_ENDPOINT_URL,
      cloudAAltBaseUrl: e.CLOUD_A_ALT_BASE_URL,
      cloudBBaseUrl: e.CLOUD_B_BASE_URL,
      cloudBOpenAiBaseUrl: e.CLOUD_B_OPENAI_BASE_URL,
    },
    maxBodyBytes: e.INFERENCE_MAX_BODY_BYTES,
  };
}

/** True when some provider has a credential: what the start banner reports. */
export function hasProviderCredential(config: InferenceConfig): boolean {
  const p = config.providers;
  return Boolean(p.cloudA || (p.cloudBKey && (p.cloudBResource || p.cloudBBaseUrl || p.cloudBOpenAiBaseUrl)));
}
