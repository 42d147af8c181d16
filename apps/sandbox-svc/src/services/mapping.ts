import type { Sandbox, SandboxExposedPort, SandboxSpec } from "@agentplane/contracts";
import { type RawBuilder, type Selectable, sql } from "kysely";
import type { SandboxTable } from "../db/schema.ts";
import type { SandboxDriver, SandboxRuntimeSpec } from "../driver/types.ts";

export type SandboxRow = Selectable<SandboxTable>;

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/**
 * Where the ingress serves a port: `https://<port>-<slug>.<ingress host>`, the form that names the
 * port (the bare `<slug>.<ingress host>` serves only the first one); null without an ingress host.
 */
export function portUrl(slug: string, port: number, ingressHost: string | undefined): string | null {
  if (!ingressHost) return null;
  return new URL(`https://${port}-${slug}.${ingressHost}`).origin;
}

/**
 * The API's view of a sandbox; `ingressHost` is the installation's (SANDBOX_INGRESS_HOST), if any;
 * `driver` says which of its limits would not hold.
 */
export function toSandbox(
  row: SandboxRow,
  ingressHost: string | undefined,
  driver?: Pick<SandboxDriver, "unenforcedLimits">,
): Sandbox {
  const unenforced = driver?.unenforcedLimits?.(row.resources);
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    slug: row.slug,
    image: row.image,
    command: (row.command ?? null) as Sandbox["command"],
    env: row.env,
    resources: row.resources,
    ports: row.ports.map(
      (p): SandboxExposedPort => ({
        port: p.port,
        visibility: p.visibility,
        url: portUrl(row.slug, p.port, ingressHost),
      }),
    ),
    idleTimeoutSeconds: row.idle_timeout_seconds,
    labels: row.labels,
    state: row.state as Sandbox["state"],
    currentRevision: row.current_revision,
    lastError: row.last_error,
    createdAt: iso(row.created_at) as string,
    updatedAt: iso(row.updated_at) as string,
    startedAt: iso(row.started_at),
    lastActivityAt: iso(row.last_activity_at),
    ...(unenforced ? { unenforcedLimits: unenforced } : {}),
  };
}

export function specOf(row: SandboxRow): SandboxSpec {
  return {
    image: row.image,
    command: (row.command ?? null) as SandboxSpec["command"],
    env: row.env,
    resources: row.resources,
    ports: row.ports,
    idleTimeoutSeconds: row.idle_timeout_seconds,
  };
}

/**
 * A jsonb parameter that both drivers read the same way: sent as text and cast by the server
 * (postgres.js would otherwise encode a pre-serialized string a second time).
 */
export function jsonb(value: unknown): RawBuilder<unknown> {
  return sql`${JSON.stringify(value)}::text::jsonb`;
}

/** Columns that hold a spec, for writing one back (rollback, update). */
export function specColumns(spec: SandboxSpec) {
  return {
    image: spec.image,
    command: jsonb(spec.command),
    env: jsonb(spec.env),
    resources: jsonb(spec.resources),
    ports: jsonb(spec.ports),
    idle_timeout_seconds: spec.idleTimeoutSeconds,
  } as const;
}

/** A command as argv: strings run through `sh -c`. */
export function toArgv(command: string | string[]): string[] {
  return typeof command === "string" ? ["/bin/sh", "-c", command] : command;
}

export function runtimeSpec(row: SandboxRow, extraEnv: Record<string, string>): SandboxRuntimeSpec {
  const command = row.command as string | string[] | null;
  return {
    id: row.id,
    slug: row.slug,
    projectId: row.project_id,
    ...(row.org_id ? { orgId: row.org_id } : {}),
    image: row.image,
    ...(command ? { command: toArgv(command) } : {}),
    env: { ...row.env, ...extraEnv },
    resources: row.resources,
  };
}
