import type { AddressInfo } from "node:net";
import type { Database } from "@agentplane/db";
import { type Bus, createOutbox } from "@agentplane/events";
import {
  createServiceApp,
  deploymentEnv,
  type InternalKeys,
  type Logger,
  type ReadinessChecks,
  type ServiceClient,
} from "@agentplane/service-kit";
import { sql } from "kysely";
import { z } from "zod";
import {
  EgressLimitsSettingsSchema,
  egressLimitsFrom,
  SandboxEgressHostMapSchema,
  SandboxSettingsSchema,
} from "../../config.ts";
import type { SandboxDB } from "../../db/schema.ts";
import { decideEgress, type EgressDeps, recordEgressRefusal } from "../../egress/decide.ts";
import { platformDestination } from "../../egress/platform.ts";
import { type EgressLimits, EgressProxy } from "../../egress/proxy.ts";
import { RefusalWindow } from "../../egress/refusal-window.ts";
import { EgressCredentialKeySchema, EgressCredentials } from "./egress-credential.ts";
import { EgressGateway } from "./egress-gateway.ts";

/** The egress proxy as its own deployable (`--target=egress`). */
export const EgressEnvSchema = deploymentEnv(8087).extend({
  /** governance-svc: every destination of every sandbox is decided there. */
  GOVERNANCE_URL: z.url(),
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
   * The proxy's own identity key: it signs its governance calls with a key governance accepts for
   * egress decisions only, and no other service at all (decision 0062; egress/identity.ts).
   */
  EGRESS_IDENTITY_PRIVATE_KEY: z.string().optional(),
});
export type EgressEnv = z.infer<typeof EgressEnvSchema>;

export interface EgressProxyServiceDeps {
  database: Database;
  bus: Bus;
  keys: InternalKeys;
  logger: Logger;
  /** governance-svc: every destination is decided there. */
  governance: ServiceClient;
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
  "credentialKey" | "proxyPort" | "proxyHost" | "apiUrl" | "hostMap" | "limits" | "refusalWindowMs"
> {
  return {
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

/**
 * The cluster's egress proxy as its own deployable (`--target=egress`): health endpoints on its
 * service port, the proxy on `proxyPort`. It reads the sandbox schema (a sandbox's org, project and
 * labels) and writes refusals to its outbox, as sandbox-svc's own proxy does; it migrates nothing.
 */
export async function createEgressProxyService(deps: EgressProxyServiceDeps): Promise<EgressProxyService> {
  const { database, bus, logger } = deps;
  const outbox = createOutbox({ database, schema: "sandbox", bus, logger });
  outbox.start();
  const refusals = new RefusalWindow({
    ...(deps.refusalWindowMs ? { windowMs: deps.refusalWindowMs } : {}),
    onError: (err) => logger.warn({ err }, "egress refusal summary not recorded"),
  });
  const decideDeps = {
    db: database.forSchema<SandboxDB>("sandbox"),
    database,
    bus,
    outbox,
    logger,
    config: {},
    governance: deps.governance,
    refusals,
  } as unknown as EgressDeps;
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
    // The sandbox schema exists once sandbox-svc (or the migration Job) has migrated it.
    database: async () => {
      await sql`select 1 from sandbox.sandboxes limit 0`.execute(database.kysely);
    },
    bus: () => bus.ready(),
  };
  const app = createServiceApp({ name: "egress", keys: deps.keys, logger, checks });
  logger.info({ port: proxyAddress.port }, "egress proxy listening");
  return {
    fetch: (request) => app.fetch(request),
    proxyAddress,
    async close() {
      await gateway.close();
      await refusals.flush();
      await outbox.stop();
    },
  };
}
