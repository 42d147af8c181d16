import type { AddressInfo } from "node:net";
import {
  createServiceApp,
  deploymentEnv,
  httpFetch,
  type InternalKeys,
  type Logger,
  type ReadinessChecks,
  ServiceClient,
} from "@agentplane/service-kit";
import { z } from "zod";
import {
  EgressLimitsSettingsSchema,
  egressLimitsFrom,
  SandboxEgressHostMapSchema,
  SandboxSettingsSchema,
} from "../../config.ts";
import { decideEgress, type EgressDeps, recordEgressRefusal } from "../../egress/decide.ts";
import { platformDestination } from "../../egress/platform.ts";
import { type EgressLimits, EgressProxy } from "../../egress/proxy.ts";
import { RefusalWindow } from "../../egress/refusal-window.ts";
import { DEFAULT_SANDBOX_CALL_TIMEOUT_MS, remoteEgressFacts } from "../../egress/remote-facts.ts";
import { EgressCredentialKeySchema, EgressCredentials } from "./egress-credential.ts";
import { EgressGateway } from "./egress-gateway.ts";

/**
 * The egress proxy as its own deployable (`--target=egress`). It holds no database or bus
 * credential (decision 0065): what it reads of sandboxes and the refusals it records go through
 * sandbox-svc's internal API.
 */
export const EgressEnvSchema = deploymentEnv(8087)
  .omit({ DATABASE_URL: true, REDIS_URL: true })
  .extend({
    /** governance-svc: every destination of every sandbox is decided there. */
    GOVERNANCE_URL: z.url(),
    /** sandbox-svc: a sandbox's organization, project and labels, and the refusals to record. */
    SANDBOX_URL: z.url(),
    /** How long one call to sandbox-svc may take before the connection waiting on it is refused (3 s). */
    EGRESS_SANDBOX_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(DEFAULT_SANDBOX_CALL_TIMEOUT_MS),
    /**
     * Shared with sandbox-svc: the key sandboxes' proxy credentials are HMACs under. The proxy holds
     * it instead of the platform's AGENTPLANE_SECRET_KEY, which it neither reads nor needs (decision 0052).
     */
    SANDBOX_EGRESS_CREDENTIAL_KEY: EgressCredentialKeySchema,
    /** Where sandboxes connect. */
    EGRESS_PROXY_PORT: z.coerce.number().int().min(0).max(65_535).default(3128),
    /** The platform's API as sandboxes name it: a destination open by default (decided as `platform`). */
    AGENTPLANE_API_URL: z.url().optional(),
    SANDBOX_EGRESS_HOST_MAP: SandboxEgressHostMapSchema.optional(),
    ...EgressLimitsSettingsSchema.shape,
    /** As sandbox-svc reads it: the proxy that refuses is the one that counts repeats (decision 0037). */
    SANDBOX_EGRESS_REFUSAL_WINDOW_MS: SandboxSettingsSchema.shape.SANDBOX_EGRESS_REFUSAL_WINDOW_MS,
    /**
     * The proxy's own identity key: governance accepts what it signs for egress decisions only,
     * sandbox-svc for its two egress routes only, no other service at all (decisions 0062, 0065;
     * egress/identity.ts).
     */
    EGRESS_IDENTITY_PRIVATE_KEY: z.string().optional(),
  });
export type EgressEnv = z.infer<typeof EgressEnvSchema>;

export interface EgressProxyServiceDeps {
  keys: InternalKeys;
  logger: Logger;
  /** `GOVERNANCE_URL`: every destination is decided there. */
  governanceUrl: string;
  /** `SANDBOX_URL`: sandboxes' facts and the refusals to record. */
  sandboxUrl: string;
  /** `EGRESS_SANDBOX_TIMEOUT_MS`: the bound of each call to sandbox-svc (3 s). */
  sandboxTimeoutMs?: number;
  /** `SANDBOX_EGRESS_CREDENTIAL_KEY` (base64), the key sandbox-svc issues the credentials with. */
  credentialKey: string;
  /** Where sandboxes connect (3128 in the chart; 0 for any free port). */
  proxyPort: number;
  proxyHost?: string;
  /** Tests only: egress names → local stand-ins. */
  hostMap?: Record<string, string>;
  /** `AGENTPLANE_API_URL`: sandboxes reach their platform through the proxy. */
  apiUrl?: string;
  /** Idle timeout and attempt rate per sandbox (defaults when absent). */
  limits?: EgressLimits;
  /** `SANDBOX_EGRESS_REFUSAL_WINDOW_MS`: repeats of one refusal within it share one audit record (60 s). */
  refusalWindowMs?: number;
}

/** What the deployable's own settings give the service (egress-main.ts), beside the runner's. */
export function egressSettings(
  env: EgressEnv,
): Pick<
  EgressProxyServiceDeps,
  | "governanceUrl"
  | "sandboxUrl"
  | "sandboxTimeoutMs"
  | "credentialKey"
  | "proxyPort"
  | "proxyHost"
  | "apiUrl"
  | "hostMap"
  | "limits"
  | "refusalWindowMs"
> {
  return {
    governanceUrl: env.GOVERNANCE_URL,
    sandboxUrl: env.SANDBOX_URL,
    sandboxTimeoutMs: env.EGRESS_SANDBOX_TIMEOUT_MS,
    credentialKey: env.SANDBOX_EGRESS_CREDENTIAL_KEY,
    proxyPort: env.EGRESS_PROXY_PORT,
    proxyHost: env.HOST,
    limits: egressLimitsFrom(env),
    ...(env.AGENTPLANE_API_URL ? { apiUrl: env.AGENTPLANE_API_URL } : {}),
    ...(env.SANDBOX_EGRESS_HOST_MAP ? { hostMap: env.SANDBOX_EGRESS_HOST_MAP } : {}),
    ...(env.SANDBOX_EGRESS_REFUSAL_WINDOW_MS ? { refusalWindowMs: env.SANDBOX_EGRESS_REFUSAL_WINDOW_MS } : {}),
  };
}

export interface EgressProxyService {
  fetch(request: Request): Response | Promise<Response>;
  /** The proxy's listening address (its port when 0 was asked). */
  proxyAddress: AddressInfo;
  close(): Promise<void>;
}

/** A service answers its liveness endpoint (readiness of the proxy: it can decide nothing without it). */
async function reachable(url: string): Promise<boolean> {
  const res = await fetch(new URL("/health/live", url), { signal: AbortSignal.timeout(2000) });
  await res.body?.cancel();
  return res.ok;
}

/**
 * The cluster's egress proxy as its own deployable (`--target=egress`): health endpoints on its
 * service port, the proxy on `proxyPort`. It asks sandbox-svc for a sandbox's org, project and
 * labels and has sandbox-svc record its refusals (counting repeats itself); it holds no database.
 */
export async function createEgressProxyService(deps: EgressProxyServiceDeps): Promise<EgressProxyService> {
  const { keys, logger } = deps;
  const refusals = new RefusalWindow({
    ...(deps.refusalWindowMs ? { windowMs: deps.refusalWindowMs } : {}),
    onError: (err) => logger.warn({ err }, "egress refusal summary not recorded"),
  });
  const decideDeps: EgressDeps = {
    facts: remoteEgressFacts({
      sandbox: new ServiceClient("sandbox", httpFetch(deps.sandboxUrl), keys),
      logger,
      windowMs: refusals.windowMs,
      ...(deps.sandboxTimeoutMs ? { timeoutMs: deps.sandboxTimeoutMs } : {}),
    }),
    governance: new ServiceClient("governance", httpFetch(deps.governanceUrl), keys),
    logger,
    refusals,
  };
  const proxy = new EgressProxy({
    decide: (sandboxId, host, port, toPlatform) => decideEgress(decideDeps, sandboxId, host, port, toPlatform),
    refused: (sandboxId, host, port, reason) => recordEgressRefusal(decideDeps, sandboxId, host, port, reason),
    logger,
    ...deps.limits,
    ...(deps.hostMap ? { hostMap: deps.hostMap } : {}),
    ...(deps.apiUrl ? { platform: platformDestination(deps.apiUrl) } : {}),
  });
  const gateway = new EgressGateway({ proxy, credentials: new EgressCredentials(deps.credentialKey), logger });
  const proxyAddress = await gateway.listen(deps.proxyPort, deps.proxyHost);
  const checks: ReadinessChecks = {
    sandbox: () => reachable(deps.sandboxUrl),
    governance: () => reachable(deps.governanceUrl),
  };
  const app = createServiceApp({ name: "egress", keys, logger, checks });
  logger.info({ port: proxyAddress.port }, "egress proxy listening");
  return {
    fetch: (request) => app.fetch(request),
    proxyAddress,
    async close() {
      await gateway.close();
      // The counted repeats of open windows are posted before the proxy stops.
      await refusals.flush();
    },
  };
}
