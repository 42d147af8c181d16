import { z } from "@hono/zod-openapi";
import { Labels, ResourceName, Timestamp } from "../common/schemas.ts";

export const SANDBOX_STATES = ["pending", "starting", "running", "stopping", "stopped", "failed", "deleting"] as const;
export const SandboxStateSchema = z.enum(SANDBOX_STATES);
export type SandboxState = z.infer<typeof SandboxStateSchema>;

/** A DNS label that starts with a letter, so `<port>-<slug>` stays unambiguous in ingress hosts. */
export const SandboxSlugSchema = z
  .string()
  .regex(/^[a-z]([a-z0-9-]{0,48}[a-z0-9])?$/, "a DNS label: lowercase letters, digits and '-', starting with a letter")
  .openapi({ example: "build-box" });

export const SandboxResourcesSchema = z
  .strictObject({
    cpuMillicores: z.number().int().min(50).max(64_000).optional(),
    memoryMiB: z.number().int().min(16).max(262_144).optional(),
    diskMiB: z.number().int().min(16).max(1_048_576).optional(),
    maxProcesses: z.number().int().min(8).max(65_536).optional(),
  })
  .describe("Limits: cpuMillicores, memoryMiB, diskMiB, maxProcesses (each optional)")
  .openapi("SandboxResources");

export const SandboxPortSchema = z.strictObject({
  port: z.number().int().min(1).max(65_535),
  visibility: z.enum(["private", "public"]).default("private"),
});

/**
 * The ports a create or an update asks for: each at most once (one port with two visibilities
 * would be served as whichever the ingress found first).
 */
const RequestedPortsSchema = z
  .array(SandboxPortSchema)
  .max(20)
  .refine((ports) => new Set(ports.map((p) => p.port)).size === ports.length, "each port at most once");

const EnvSchema = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"), z.string().max(32_768))
  .refine((env) => Object.keys(env).length <= 200, "at most 200 variables");

export const LabelsSchema = Labels;

// Request bodies are strict objects, as tenancy's are: an unknown field is a 400 naming it
// (`/body/<field>`), never silently dropped (a misspelt `idleTimeoutSecond` would otherwise pass).

/** A command: a string run by `sh -c`, or an argv array. */
export const CommandSchema = z.union([z.string().min(1).max(65_536), z.array(z.string().max(65_536)).min(1).max(1000)]);

/** The part of a sandbox that revisions record. */
export const SandboxSpecSchema = z
  .object({
    image: z.string().min(1).max(512).default("default").openapi({ description: "Local image name or OCI reference" }),
    command: CommandSchema.nullable().default(null),
    env: EnvSchema.default({}),
    resources: SandboxResourcesSchema.default({}),
    ports: z.array(SandboxPortSchema).max(20).default([]),
    idleTimeoutSeconds: z
      .number()
      .int()
      .min(0)
      .max(604_800)
      .default(1800)
      .openapi({ description: "0 disables auto-stop" }),
  })
  .openapi("SandboxSpec");
export type SandboxSpec = z.infer<typeof SandboxSpecSchema>;

/** A port as the API returns it: the request's fields plus where the ingress serves it. */
export const SandboxExposedPortSchema = z
  .object({
    port: z.number().int(),
    visibility: z.enum(["private", "public"]),
    url: z.string().nullable().openapi({
      description:
        "`https://<port>-<slug>.<ingress host>`, the address the ingress serves this port at; null when the installation has no ingress host (SANDBOX_INGRESS_HOST)",
      example: "https://8080-build-box.sbx.example.com",
    }),
  })
  .openapi("SandboxExposedPort");
export type SandboxExposedPort = z.infer<typeof SandboxExposedPortSchema>;

export const SandboxSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    slug: z.string(),
    image: z.string(),
    command: CommandSchema.nullable(),
    env: z.record(z.string(), z.string()),
    resources: SandboxResourcesSchema,
    ports: z.array(SandboxExposedPortSchema),
    idleTimeoutSeconds: z.number().int(),
    labels: z.record(z.string(), z.string()),
    state: SandboxStateSchema,
    currentRevision: z.number().int(),
    lastError: z.string().nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    startedAt: Timestamp.nullable(),
    lastActivityAt: Timestamp.nullable(),
    unenforcedLimits: z
      .object({
        resources: z
          .array(z.enum(["cpuMillicores", "memoryMiB", "diskMiB", "maxProcesses"]))
          .describe("The limits of `resources` that do not hold"),
        reason: z.string().openapi({ example: "cgroups unavailable on this host (/sys/fs/cgroup not writable)" }),
      })
      .optional()
      .describe(
        "Present when some of `resources` are accepted but not enforced where the sandbox runs: the local driver without writable cgroups (cpu, memory, processes), `diskMiB` under the local driver, and `maxProcesses` on Kubernetes (a Pod has no process limit of its own). Absent when every limit set holds.",
      ),
  })
  .openapi("Sandbox");
export type Sandbox = z.infer<typeof SandboxSchema>;

export const UpdatedSandboxSchema = SandboxSchema.extend({
  restarted: z
    .boolean()
    .describe(
      "True when the change made a new revision of a sandbox that was running: it was stopped and started again on it (processes and open sessions ended)",
    ),
}).openapi("UpdatedSandbox");

export const CreateSandboxRequest = z
  .strictObject({
    name: ResourceName,
    slug: SandboxSlugSchema.optional(),
    labels: LabelsSchema.default({}),
    start: z.boolean().default(false).describe("Start the sandbox right after creating it"),
    image: z.string().min(1).max(512).optional(),
    command: CommandSchema.optional(),
    env: EnvSchema.optional(),
    resources: SandboxResourcesSchema.optional(),
    ports: RequestedPortsSchema.optional(),
    idleTimeoutSeconds: z.number().int().min(0).max(604_800).optional(),
  })
  .openapi("CreateSandboxRequest");

export const UpdateSandboxRequest = z
  .strictObject({
    name: ResourceName.optional(),
    labels: LabelsSchema.optional(),
    image: z.string().min(1).max(512).optional(),
    command: CommandSchema.nullable().optional(),
    env: EnvSchema.optional(),
    resources: SandboxResourcesSchema.optional(),
    ports: RequestedPortsSchema.optional(),
    idleTimeoutSeconds: z.number().int().min(0).max(604_800).optional(),
    reason: z.string().max(500).optional().openapi({ description: "Recorded on the new revision" }),
  })
  .openapi("UpdateSandboxRequest");

export const SandboxListQuery = z.object({
  state: SandboxStateSchema.optional(),
  labelSelector: z
    .string()
    .max(1000)
    .optional()
    .openapi({ description: "Comma-separated `key=value` or `key` (label present)", example: "team=ml,env=dev" }),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});

export const SandboxRevisionSchema = z
  .object({
    sandboxId: z.string(),
    revision: z.number().int(),
    spec: SandboxSpecSchema,
    author: z.object({
      type: z.string(),
      id: z.string(),
      name: z
        .string()
        .optional()
        .describe(
          "The author's display name when the revision was written (a user's name or email, a token's name); absent on revisions written before names were kept",
        ),
    }),
    reason: z.string().nullable(),
    createdAt: Timestamp,
    workspace: z
      .object({
        method: z
          .enum(["tar", "volume-snapshot"])
          .describe(
            "`volume-snapshot`: a VolumeSnapshot of the workspace's claim (Kubernetes with a VolumeSnapshotClass); `tar`: a gzipped tar stream of the workspace, taken over exec",
          ),
        sizeBytes: z.number().int().describe("Size of the stored workspace in bytes"),
      })
      .nullable()
      .describe(
        "The workspace as it was when this revision stopped being current (a running sandbox's); a rollback to this revision restores it. Null when none was taken.",
      ),
  })
  .openapi("SandboxRevision");
export type SandboxRevision = z.infer<typeof SandboxRevisionSchema>;

export const RollbackRequest = z.strictObject({
  revision: z
    .number()
    .int()
    .min(1)
    // Revisions are stored as 32-bit integers: a larger number names none (a 400, not the database's error).
    .max(2_147_483_647)
    .describe("The revision whose spec to restore, and its workspace where one was kept"),
  reason: z.string().max(500).optional(),
});

export const MAX_EXEC_TIMEOUT_MS = 15 * 60 * 1000;
export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

export const ExecRequest = z
  .strictObject({
    projectId: z.string().min(1).max(64),
    sandboxId: z.string().min(1).max(64),
    command: CommandSchema,
    cwd: z.string().startsWith("/").max(4096).optional(),
    env: EnvSchema.optional(),
    stdin: z
      .string()
      .max(512 * 1024)
      .optional(),
    timeoutMs: z.number().int().min(1).max(MAX_EXEC_TIMEOUT_MS).default(DEFAULT_EXEC_TIMEOUT_MS),
  })
  .openapi("ExecRequest");

export const ExecResultSchema = z
  .object({
    exitCode: z.number().int(),
    stdout: z.string(),
    stderr: z.string(),
    stdoutTruncated: z.boolean(),
    stderrTruncated: z.boolean(),
    timedOut: z.boolean(),
    durationMs: z.number().int(),
  })
  .openapi("ExecResult");

export const ShellSessionSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    sandboxId: z.string(),
    createdAt: Timestamp,
    lastActivityAt: Timestamp,
    expiresAt: Timestamp,
  })
  .openapi("ShellSession");

export const CreateShellSessionRequest = z.strictObject({ sandboxId: z.string().min(1).max(64) });
export const ShellSessionCommandRequest = z.strictObject({
  command: z
    .string()
    .min(1)
    .max(65_536)
    .describe("A shell command line, run in the session's working directory with its exported variables"),
  timeoutMs: z.number().int().min(1).max(MAX_EXEC_TIMEOUT_MS).default(DEFAULT_EXEC_TIMEOUT_MS),
});

export const SandboxTokenSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    sandboxId: z.string(),
    name: z.string(),
    createdAt: Timestamp,
    expiresAt: Timestamp.nullable(),
    lastUsedAt: Timestamp.nullable(),
  })
  .openapi("SandboxToken");

export const CreateSandboxTokenRequest = z.strictObject({
  sandboxId: z.string().min(1).max(64),
  name: z.string().min(1).max(100),
  expiresIn: z.number().int().min(60).max(31_536_000).optional().openapi({ description: "Seconds until expiry" }),
});

export const CreatedSandboxTokenSchema = SandboxTokenSchema.extend({
  token: z.string().openapi({ description: "Shown once" }),
}).openapi("CreatedSandboxToken");
