import { ProblemError } from "@agentplane/problem-details";
import type { Kysely } from "kysely";
import { z } from "zod";
import type { Provider } from "../config.ts";
import type { RuntimeDatabase } from "../db/schema/index.ts";
import { checkModelOverrides, setModelOverrides, setVerbose } from "../services/agent.ts";
import type { AgentTool, ToolOutcome } from "../tools/types.ts";

export const SETTINGS_TOOL_NAME = "update_settings";

export const settingsTool: AgentTool = {
  name: SETTINGS_TOOL_NAME,
  description:
    "Change this agent's own settings. verbose: deliver every intermediate text step (true) or only the final answer (false). " +
    "mainModel, heartbeatModel, cronModel: model overrides (a model id, or a deployment name on cloud-b); null or an empty string clears one.",
  inputSchema: {
    type: "object",
    properties: {
      verbose: { type: "boolean" },
      mainModel: { type: ["string", "null"] },
      heartbeatModel: { type: ["string", "null"] },
      cronModel: { type: ["string", "null"] },
    },
    additionalProperties: false,
  },
  handler: (input, context) => runSettingsTool(context.db, context.provider, input),
  manages: true,
};

const SettingsInput = z
  .object({
    verbose: z.boolean().optional(),
    mainModel: z.string().max(200).nullable().optional(),
    heartbeatModel: z.string().max(200).nullable().optional(),
    cronModel: z.string().max(200).nullable().optional(),
  })
  .strict();

export async function runSettingsTool(
  db: Kysely<RuntimeDatabase>,
  provider: Provider,
  input: unknown,
): Promise<ToolOutcome> {
  const parsed = SettingsInput.safeParse(input);
  if (!parsed.success) {
    return { content: `Invalid settings: ${parsed.error.issues.map((i) => i.message).join("; ")}`, isError: true };
  }
  const { verbose, mainModel, heartbeatModel, cronModel } = parsed.data;
  const overrides = { main: mainModel, heartbeat: heartbeatModel, cron: cronModel };
  // Checked before anything is written: a rejected call changes no setting at all.
  try {
    checkModelOverrides(provider, overrides);
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    const fields = (err.errors ?? []).map((e) => e.message).join("; ");
    return { content: `Invalid settings: ${fields || err.message}`, isError: true };
  }
  if (verbose !== undefined) await setVerbose(db, verbose);
  const agent = await setModelOverrides(db, overrides);
  return {
    content: JSON.stringify({
      verbose: agent.verbose === 1,
      mainModel: agent.main_model,
      heartbeatModel: agent.heartbeat_model,
      cronModel: agent.cron_model,
    }),
    isError: false,
  };
}
