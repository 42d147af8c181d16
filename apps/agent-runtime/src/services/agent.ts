import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentProfile, ModelOverrides, UpdateModelsBody } from "@agentplane/contracts/runtime";
import { badRequest } from "@agentplane/problem-details";
import type { Kysely } from "kysely";
import { nonBareReason, type Provider, type RuntimeConfig } from "../config.ts";
import type { AgentTable } from "../db/schema/agent.ts";
import type { RuntimeDatabase } from "../db/schema/index.ts";
import { newId, nowIso } from "../ids.ts";

export type AgentRow = AgentTable;
type SeededOverrides = Pick<AgentTable, "main_model" | "heartbeat_model" | "cron_model">;

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

/** Seeds from `<AGENT_HOME>/settings.json`; a missing or malformed file (or value) seeds nothing. */
export function readBootstrapSettings(agentHome: string): SeededOverrides {
  const empty = { main_model: null, heartbeat_model: null, cron_model: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(agentHome, "settings.json"), "utf8"));
  } catch {
    return empty;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return empty;
  const s = parsed as Record<string, unknown>;
  return {
    main_model: stringOrNull(s.modelId),
    heartbeat_model: stringOrNull(s.heartbeatModelId),
    cron_model: stringOrNull(s.cronModelId),
  };
}

/**
 * First boot (empty database) creates the agent, its main web thread and the receiver switch;
 * later boots return the stored agent and change nothing.
 */
export async function ensureAgent(db: Kysely<RuntimeDatabase>, config: RuntimeConfig): Promise<AgentRow> {
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom("agent").selectAll().executeTakeFirst();
    if (existing) return existing;
    const now = nowIso();
    const agent: AgentRow = {
      id: config.env.AGENT_ID ?? randomUUID(),
      name: config.env.AGENT_NAME,
      team: config.env.TEAM_NAME,
      owner_user_id: config.env.OWNER_USER_ID,
      verbose: 0,
      ...readBootstrapSettings(config.agentHome),
      created_at: now,
    };
    await trx.insertInto("agent").values(agent).execute();
    await trx
      .insertInto("thread")
      .values({
        id: newId("thr"),
        kind: "web",
        title: "Main",
        is_main: 1,
        external_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await trx.insertInto("setting").values({ key: "webhooks.enabled", value: "false" }).execute();
    return agent;
  });
}

export interface ModelDefaults {
  main: string;
  classification: string;
}

export function modelDefaults(config: RuntimeConfig): ModelDefaults {
  const env = config.env;
  return config.provider === "cloud-b"
    ? { main: env.CLOUD_B_MODEL_ID, classification: env.CLOUD_B_CLASSIFICATION_MODEL_ID }
    : { main: env.CLOUD_A_MODEL_ID, classification: env.CLOUD_A_CLASSIFICATION_MODEL_ID };
}

export function overridesOf(agent: AgentRow): ModelOverrides {
  return { main: agent.main_model, heartbeat: agent.heartbeat_model, cron: agent.cron_model };
}

/** main = override or the provider default; heartbeat and cron fall back to main; classification never overridden. */
export function effectiveModels(agent: AgentRow, defaults: ModelDefaults): AgentProfile["models"] {
  const main = agent.main_model ?? defaults.main;
  return {
    main,
    heartbeat: agent.heartbeat_model ?? main,
    cron: agent.cron_model ?? main,
    classification: defaults.classification,
  };
}

export async function loadAgent(db: Kysely<RuntimeDatabase>): Promise<AgentRow> {
  return db.selectFrom("agent").selectAll().executeTakeFirstOrThrow();
}

export function toProfile(
  agent: AgentRow,
  config: RuntimeConfig,
  catalog: { windowOf(modelId: string): number | null },
): AgentProfile {
  const models = effectiveModels(agent, modelDefaults(config));
  return {
    id: agent.id,
    name: agent.name,
    team: agent.team,
    owner: agent.owner_user_id,
    verbose: agent.verbose === 1,
    provider: config.provider,
    gateway: config.env.GATEWAY_API_URL !== undefined,
    overrides: overridesOf(agent),
    models,
    contextWindow: catalog.windowOf(models.main),
  };
}

export async function setVerbose(db: Kysely<RuntimeDatabase>, verbose: boolean): Promise<AgentRow> {
  await db
    .updateTable("agent")
    .set({ verbose: verbose ? 1 : 0 })
    .execute();
  return loadAgent(db);
}

/**
 * A model id or deployment name as providers name them (`claude-sonnet-4-6`, `gpt-4o-2024-08-06`,
 * `meta/llama-3`, `model@2024`): it ends up in a request path of some providers, so nothing that
 * would change the path (`..`, an empty part, `?`, `#`, `%`, spaces) is one.
 */
function isModelId(value: string): boolean {
  return (
    /^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$/.test(value) && value.split("/").every((part) => part !== "" && part !== "..")
  );
}

/**
 * `cloud-a-alt` takes bare model ids only (spec "Per-agent model overrides"): the same rule the
 * start-up check applies to CLOUD_A_MODEL_ID, applied to overrides set at run time. Throws a
 * 400 problem naming the rule, with one entry per offending field.
 */
export function checkModelOverrides(provider: Provider, input: UpdateModelsBody): void {
  const malformed: Array<{ pointer: string; message: string }> = [];
  for (const key of ["main", "heartbeat", "cron"] as const) {
    const value = stringOrNull(input[key]);
    if (value !== null && !isModelId(value))
      malformed.push({
        pointer: `/body/${key}`,
        message: `"${value.slice(0, 80)}" is not a model id: letters, digits and . _ - : @ + /, with no empty or ".." part`,
      });
  }
  if (malformed.length > 0) throw badRequest("A model override is not a model id", malformed);
  if (provider !== "cloud-a-alt") return;
  const errors: Array<{ pointer: string; message: string }> = [];
  for (const key of ["main", "heartbeat", "cron"] as const) {
    const value = stringOrNull(input[key]);
    const reason = value === null ? undefined : nonBareReason(value);
    if (reason) {
      errors.push({
        pointer: `/body/${key}`,
        message: `"${value}" ${reason}; cloud-a-alt takes bare model ids (no regional prefix such as "us.", no version suffix such as "-v1:0")`,
      });
    }
  }
  if (errors.length > 0) {
    throw badRequest("cloud-a-alt takes bare model ids: no regional prefix and no version suffix", errors);
  }
}

/** `null` or blank clears an override; keys left out stay as they are. Check the ids first (checkModelOverrides). */
export async function setModelOverrides(db: Kysely<RuntimeDatabase>, input: UpdateModelsBody): Promise<AgentRow> {
  const patch: Partial<SeededOverrides> = {};
  if (input.main !== undefined) patch.main_model = stringOrNull(input.main);
  if (input.heartbeat !== undefined) patch.heartbeat_model = stringOrNull(input.heartbeat);
  if (input.cron !== undefined) patch.cron_model = stringOrNull(input.cron);
  if (Object.keys(patch).length > 0) await db.updateTable("agent").set(patch).execute();
  return loadAgent(db);
}
