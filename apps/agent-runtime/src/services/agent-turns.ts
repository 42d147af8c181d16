import type { RuntimeDeps } from "../deps.ts";
import { runTurn, type TurnOutcome } from "../turns/run-turn.ts";
import { effectiveModels, loadAgent, modelDefaults } from "./agent.ts";
import type { MessageRow } from "./threads.ts";

/** Runs one turn of the agent in a thread with its current verbose setting and main model. */
export async function runAgentTurn(
  deps: Pick<RuntimeDeps, "database" | "messages" | "model" | "config" | "tools" | "logger" | "skills">,
  input: { threadId: string; text: string; source: string; onDelivered?: (message: MessageRow) => void },
): Promise<TurnOutcome> {
  const db = deps.database.db;
  const agent = await loadAgent(db);
  const models = effectiveModels(agent, modelDefaults(deps.config));
  const system =
    `You are ${agent.name}, the AI agent of the team "${agent.team}". ` +
    "Answer helpfully and concisely. You can change your own settings with the update_settings tool when asked. " +
    `Shell tools work in the workspace ${deps.config.workspaceRoot}; paths are relative to it.`;
  const skills = deps.skills.promptSection();
  return runTurn({
    db,
    messages: deps.messages,
    model: deps.model,
    provider: deps.config.provider,
    modelId: models.main,
    tools: deps.tools,
    logger: deps.logger,
    threadId: input.threadId,
    userText: input.text,
    verbose: agent.verbose === 1,
    system: skills ? `${system}\n\n${skills}` : system,
    source: input.source,
    ...(input.onDelivered ? { onDelivered: input.onDelivered } : {}),
  });
}
