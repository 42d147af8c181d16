import { resolve } from "node:path";
import { SandboxEgressHostMapSchema, SandboxImagesJsonSchema } from "@agentplane/sandbox-svc";
import { TenancySettingsSchema } from "@agentplane/tenancy-svc";
import { z } from "zod";

/** Settings of the all-in-one launcher (`npm start`). */
export const AllInOneEnvSchema = z.object({
  // Tenancy's own settings (PUBLIC_URL, OIDC_*, the bootstrap token, key rotation), read as tenancy reads them.
  ...TenancySettingsSchema.shape,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default("0.0.0.0"),
  AGENTPLANE_DATA_DIR: z.string().default("./.agentplane"),
  DATABASE_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
  AGENTPLANE_SECRET_KEY: z.string().optional(),
  /** The master key before a rotation: governance credentials wrapped with it still decrypt until re-wrapped. */
  AGENTPLANE_SECRET_KEY_PREVIOUS: z.string().optional(),
  OIDC_AUDIENCE: z.string().optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  SANDBOX_INGRESS_HOST: z.string().optional(),
  SANDBOX_LOCAL_ISOLATION: z.enum(["bwrap", "none"]).optional(),
  SANDBOX_IMAGES_JSON: SandboxImagesJsonSchema.optional(),
  /** Tests only: egress host names → local stand-ins (`{"registry.test":"127.0.0.1:8080"}`). */
  SANDBOX_EGRESS_HOST_MAP: SandboxEgressHostMapSchema.optional(),
  /** Internal hosts connectors may reach (comma-separated hosts, host:port or CIDR ranges). */
  CONNECTOR_ALLOWED_HOSTS: z.string().optional(),
  AGENT_RUNTIME: z.enum(["on", "off"]).default("on"),
  AGENT_RUNTIME_PORT: z.coerce.number().int().min(0).max(65535).default(3003),
  /** The runtime binds loopback natively; the container image sets 0.0.0.0. */
  AGENT_RUNTIME_HOST: z.string().default("127.0.0.1"),
  LOG_LEVEL: z.string().default("info"),
});
export type AllInOneEnv = z.infer<typeof AllInOneEnvSchema>;

export function dataDirOf(env: AllInOneEnv): string {
  return resolve(env.AGENTPLANE_DATA_DIR);
}
