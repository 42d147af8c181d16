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
    /** `1`: AGENTPLANE_URL may be plain http to another machine, on a network the operator trusts. */
    AGENTPLANE_INSECURE_HTTP: z
      .stringbool({ truthy: ["true", "1", "yes", "on"], falsy: ["false", "0", "no", "off"] })
      // The on/off words every other deployable takes (service-kit's envBoolean), for the reference.
      .meta({ enum: ["true", "false", "1", "0", "yes", "no", "on", "off"] })
      .optional(),
  })
  .refine((env) => env.TUNNEL_TOKEN_FILE || env.TUNNEL_TOKEN_SECRET, {
    message: "set TUNNEL_TOKEN_FILE or TUNNEL_TOKEN_SECRET",
    path: ["TUNNEL_TOKEN_FILE"],
  })
  .superRefine((env, ctx) => {
    const { protocol, hostname, host } = new URL(env.AGENTPLANE_URL);
    if (protocol !== "http:" && protocol !== "https:") {
      ctx.addIssue({ code: "custom", path: ["AGENTPLANE_URL"], message: "an http(s) address" });
      return;
    }
    // The tunnel token goes there, and the keys every request is verified with come from there.
    if (protocol === "https:" || isLoopback(hostname) || env.AGENTPLANE_INSECURE_HTTP === true) return;
    ctx.addIssue({
      code: "custom",
      path: ["AGENTPLANE_URL"],
      message: `plain http to ${host} carries the tunnel token and the platform's keys where anyone on the way can read or replace them: use https://${host}, or set AGENTPLANE_INSECURE_HTTP=1 on a network you trust`,
    });
  });

/**
 * This machine: localhost, 127.0.0.0/8, ::1. Not `*.localhost`: browsers keep those names here, but
 * the relay resolves names with the system resolver, which sends them to DNS like any other.
 */
function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}
export type RelayEnv = z.infer<typeof RelayEnvSchema>;

export function parseRelayEnv(env: Record<string, string | undefined>): RelayEnv {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = RelayEnvSchema.safeParse(cleaned);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `${String(i.path[0] ?? "(env)")}: ${i.message}`);
  throw new Error(`invalid relay configuration:\n  ${lines.join("\n  ")}`);
}
