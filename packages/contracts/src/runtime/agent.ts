import { z } from "@hono/zod-openapi";

/** An override value: a model id (cloud-a, cloud-a-alt) or a deployment name (cloud-b). */
const ModelOverride = z.string().max(200).nullable();

export const ModelOverrides = z
  .object({ main: ModelOverride, heartbeat: ModelOverride, cron: ModelOverride })
  .openapi("ModelOverrides");

export const EffectiveModels = z
  .object({ main: z.string(), heartbeat: z.string(), cron: z.string(), classification: z.string() })
  .openapi("EffectiveModels");

export const AgentProfile = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    team: z.string(),
    owner: z.string(),
    verbose: z.boolean(),
    provider: z.enum(["cloud-a", "cloud-a-alt", "cloud-b"]),
    gateway: z.boolean(),
    overrides: ModelOverrides,
    models: EffectiveModels,
    /** The main model's input-context window in tokens; null when unknown (no compaction, no usage indicator). */
    contextWindow: z.number().int().positive().nullable(),
  })
  .openapi("AgentProfile");

export const UpdateVerboseBody = z.object({ verbose: z.boolean() }).strict().openapi("UpdateVerbose");

/** `null` or `""` clears an override; an absent key leaves it as it is. */
export const UpdateModelsBody = z
  .object({ main: ModelOverride.optional(), heartbeat: ModelOverride.optional(), cron: ModelOverride.optional() })
  .strict()
  .openapi("UpdateModels");

export type AgentProfile = z.infer<typeof AgentProfile>;
export type ModelOverrides = z.infer<typeof ModelOverrides>;
export type UpdateModelsBody = z.infer<typeof UpdateModelsBody>;
