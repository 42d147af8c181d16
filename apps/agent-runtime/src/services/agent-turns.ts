import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { afterTurn, COMMAND_SOURCE, compactThread, contextHistory } from "../context/compaction.ts";
import type { RuntimeDeps } from "../deps.ts";
import { runTurn, type TurnEvent, type TurnOutcome } from "../turns/run-turn.ts";
import { effectiveModels, loadAgent, modelDefaults } from "./agent.ts";
import type { MessageRow } from "./threads.ts";

export type TurnDeps = Pick<
  RuntimeDeps,
  | "database"
  | "messages"
  | "model"
  | "config"
  | "tools"
  | "logger"
  | "skills"
  | "catalog"
  | "live"
  | "activity"
  | "tracing"
  | "telemetry"
  | "usage"
> &
  Partial<Pick<RuntimeDeps, "turns">>;

export interface AgentTurnInput {
  threadId: string;
  text: string;
  source: string;
  /** The webhook, schedule or heartbeat run the turn belongs to (usage records carry it). */
  runId?: string;
  /** Which model override applies: main (chat, webhooks), heartbeat or cron. */
  purpose?: "main" | "heartbeat" | "cron";
  onDelivered?: (message: MessageRow) => void;
  /** Called as each tool starts, whatever the verbose setting. */
  onToolStart?: (name: string) => void;
  /** Deliveries of this turn are not published live (a heartbeat result waits for the gate). */
  quiet?: boolean;
  /** The model's view of the thread, when it is not the stored one (team chat re-reads it live). */
  buildHistory?: (threadId: string) => MessageParam[];
  /**
   * The agent's owner started the turn, so the tools that change the agent (settings, schedules)
   * are offered. Unset: only web-chat turns (`source` `web`: the web UI and the terminal UI are
   * the owner's own clients). Team chat says per message. Webhook, schedule and heartbeat turns
   * are never offered them: they run unattended on input from outside (a webhook's payload, what
   * a scheduled prompt reads, a checklist file the shell tools can write), and a change to the
   * agent should come from its owner in person.
   */
  manage?: boolean;
  /**
   * Someone other than the owner started the turn in team chat (a channel member, another bot):
   * what the agent remembers for it is shared with the team, and it reaches only such notes.
   */
  teamMember?: boolean;
  /** Added to the system prompt: how this conversation's messages are labelled (team chat channels). */
  systemNote?: string;
}

const COMPACT = /^\/compact(?:\s+([\s\S]*))?$/;

async function runCompactCommand(deps: TurnDeps, input: AgentTurnInput, modelId: string): Promise<TurnOutcome> {
  const focus = COMPACT.exec(input.text.trim())?.[1]?.trim() || undefined;
  const userMessage = await deps.messages.append({
    threadId: input.threadId,
    role: "user",
    content: [{ type: "text", text: input.text }],
    text: input.text,
    internal: false,
    source: COMMAND_SOURCE,
  });
  const result = await compactThread(
    { ...deps, sqlite: deps.database.sqlite, catalog: deps.catalog },
    input.threadId,
    modelId,
    focus,
  );
  const answer = result.compacted
    ? `Compacted ${result.messages} older messages into one summary; the newest ${deps.config.env.COMPACTION_TAIL_MESSAGES} stay verbatim. The full history stays visible here.`
    : result.reason;
  const row = await deps.messages.append({
    threadId: input.threadId,
    role: "assistant",
    content: [{ type: "text", text: answer }],
    text: answer,
    internal: false,
    source: COMMAND_SOURCE,
  });
  input.onDelivered?.(row);
  deps.live?.publishMessage(row);
  return { userMessage, delivered: [row], steps: 0, stepLimitReached: false, contextTokens: 0 };
}

/** Where a turn came from, as telemetry and tracing name it. */
export function runSource(input: Pick<AgentTurnInput, "source" | "purpose">): RunSource {
  if (input.purpose === "heartbeat") return "heartbeat";
  if (input.purpose === "cron" || input.source.startsWith("schedule:")) return "schedule";
  if (input.source.startsWith("webhook:")) return "webhook";
  if (input.source.startsWith("team-chat") || input.source.startsWith("slack")) return "team_chat";
  return "web";
}
type RunSource = "web" | "webhook" | "heartbeat" | "schedule" | "team_chat";
const TRACE_KIND = {
  web: "chat",
  webhook: "webhook",
  heartbeat: "heartbeat",
  schedule: "schedule",
  team_chat: "team_chat",
} as const;

/** Runs one turn of the agent in a thread with its current verbose setting and the model for its purpose. */
export function runAgentTurn(deps: TurnDeps, input: AgentTurnInput): Promise<TurnOutcome> {
  const source = runSource(input);
  const kind = COMPACT.test(input.text.trim()) ? "compaction" : TRACE_KIND[source];
  const usage = { source, threadId: input.threadId, runId: input.runId };
  return deps.activity.track(() =>
    deps.tracing.run(kind, { threadId: input.threadId }, () =>
      deps.usage.within(usage, async () => {
        const started = performance.now();
        const common = { "thread.id": input.threadId, "run.source": source } as const;
        try {
          const outcome = await agentTurn(deps, input);
          deps.telemetry.emit("turn.completed", {
            ...common,
            "turn.steps": outcome.steps,
            "turn.delivered": outcome.delivered.length,
            "turn.step_limit_reached": outcome.stepLimitReached,
            "turn.duration_ms": performance.now() - started,
            "context.tokens": outcome.contextTokens,
          });
          return outcome;
        } catch (err) {
          deps.telemetry.emit("turn.failed", { ...common, "turn.duration_ms": performance.now() - started });
          throw err;
        }
      }),
    ),
  );
}

async function agentTurn(deps: TurnDeps, input: AgentTurnInput): Promise<TurnOutcome> {
  const db = deps.database.db;
  const agent = await loadAgent(db);
  const models = effectiveModels(agent, modelDefaults(deps.config));
  const modelId = models[input.purpose ?? "main"];
  if (COMPACT.test(input.text.trim())) return runCompactCommand(deps, input, modelId);
  const thread = await db
    .selectFrom("thread")
    .select(["id", "kind"])
    .where("id", "=", input.threadId)
    .executeTakeFirstOrThrow();
  const manage = input.manage ?? input.source === "web";
  const system =
    `You are ${agent.name}, the AI agent of the team "${agent.team}". ` +
    "Answer helpfully and concisely. " +
    (manage
      ? "You can change your own settings with the update_settings tool when asked. "
      : "Only your owner can change your settings and schedules, and not from this conversation. ") +
    `Shell tools work in the workspace ${deps.config.workspaceRoot}; paths are relative to it.` +
    (input.systemNote ? ` ${input.systemNote}` : "");
  const skills = deps.skills.promptSection();
  const live = input.quiet ? undefined : deps.live;
  const control = deps.turns?.begin(input.threadId);
  const outcome = await runTurn({
    ...(control ? { signal: control.signal } : {}),
    db,
    messages: deps.messages,
    model: deps.model,
    provider: deps.config.provider,
    modelId,
    tools: deps.tools,
    logger: deps.logger,
    threadId: input.threadId,
    userText: input.text,
    verbose: agent.verbose === 1,
    system: skills ? `${system}\n\n${skills}` : system,
    source: input.source,
    manage,
    ...(input.teamMember ? { teamMember: true } : {}),
    ...(live ? { onUserMessage: (message: MessageRow) => live.publishMessage(message) } : {}),
    buildHistory:
      input.buildHistory ??
      ((threadId) => contextHistory({ sqlite: deps.database.sqlite, messages: deps.messages }, threadId)),
    onDelivered: (message) => {
      input.onDelivered?.(message);
      live?.publishMessage(message);
    },
    ...(live ? { onEvent: (event: TurnEvent) => live.publishTurnEvent(input.threadId, event) } : {}),
    ...(input.onToolStart ? { onToolStart: input.onToolStart } : {}),
  }).finally(() => control?.end());
  await afterTurn(
    { ...deps, sqlite: deps.database.sqlite, catalog: deps.catalog },
    thread,
    modelId,
    outcome.contextTokens,
  );
  return outcome;
}
