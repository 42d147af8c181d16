import pino from "pino";
import { z } from "zod";

export const RELAY_VERSION = "0.1.0";

/** The relay's environment; it fails fast naming the variable. */
export const RelayEnvSchema = z
  .object({
    /** The control plane's public base URL (`https://agentplane.example.com`). */
    AGENTPLANE_URL: z.url(),
    CLUSTER_ID: z.string().min(1),
    /** A file holding the tunnel token; a rotated token is written back to it. */
    TUNNEL_TOKEN_FILE: z.string().min(1).optional(),
    /** Or a Kubernetes Secret holding it, `namespace/name` (key `token`); a rotated token is written back to it. */
    TUNNEL_TOKEN_SECRET: z
      .string()
      .regex(/^[a-z0-9-]+\/[a-z0-9.-]+$/, "namespace/name")
      .optional(),
    TUNNEL_TOKEN_SECRET_KEY: z.string().min(1).default("token"),
    HEARTBEAT_MS: z.coerce.number().int().min(100).default(10_000),
    /** pino's level names and `silent`. */
    LOG_LEVEL: z.enum([...Object.keys(pino.levels.values), "silent"]).default("info"),
  })
  .refine((env) => env.TUNNEL_TOKEN_FILE || env.TUNNEL_TOKEN_SECRET, {
    message: "set TUNNEL_TOKEN_FILE or TUNNEL_TOKEN_SECRET",
    path: ["TUNNEL_TOKEN_FILE"],
  });
export type RelayEnv = z.infer<typeof RelayEnvSchema>;

export function parseRelayEnv(env: Record<string, string | undefined>): RelayEnv {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = RelayEnvSchema.safeParse(cleaned);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `${String(i.path[0] ?? "(env)")}: ${i.message}`);
  throw new Error(`invalid relay configuration:\n  ${lines.join("\n  ")}`);
}
