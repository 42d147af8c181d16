import { type SlackStandIn, startSlackStandIn } from "@agentplane/testkit/slack";
import type { Logger } from "pino";
import type { SlackTeamChat, SlackTeamChatOptions } from "../../src/chat/slack/adapter.ts";
import { WORKING_STATUS } from "../../src/chat/slack/history.ts";
import { type FakeModel, lastUserText } from "./fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./runtime.ts";

export interface SlackTestRuntime extends TestRuntime {
  slack: SlackTeamChat;
}

/** A runtime whose team chat is the Slack adapter, pointed at the stand-in. */
export async function startSlackRuntime(
  fake: FakeModel,
  standIn: SlackStandIn,
  options: { env?: Record<string, string>; logger?: Logger; slack?: SlackTeamChatOptions; home?: string } = {},
): Promise<SlackTestRuntime> {
  const rt = await startTestRuntime(fake, {
    env: {
      CHAT_BOT_TOKEN: standIn.botToken,
      CHAT_APP_TOKEN: standIn.appToken,
      CHAT_API_URL: standIn.apiUrl,
      ...options.env,
    },
    ...(options.home ? { home: options.home } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    runtimeOptions: { slack: { retryIntervalMs: 100, retryBaseMs: 50, bootRetryMs: 200, ...options.slack } },
  });
  return { ...rt, slack: rt.runtime.deps.teamChat as SlackTeamChat };
}

/** Waits until the adapter is connected (or refused: then its status says why). */
export function settled(rt: SlackTestRuntime, timeoutMs = 10_000) {
  return waitFor(() => {
    const status = rt.slack.status();
    return status.state === "connected" || status.state === "disabled" ? status : undefined;
  }, timeoutMs);
}

/** A fresh stand-in with these people (id -> name), and the fake model back to echoing, with no requests. */
export async function freshStandIn(fake: FakeModel, people: Record<string, string>): Promise<SlackStandIn> {
  fake.requests.length = 0;
  fake.respond = (body) => ({ content: [{ type: "text", text: `echo: ${lastUserText(body)}` }] });
  const standIn = await startSlackStandIn();
  for (const [id, name] of Object.entries(people)) standIn.workspace.addUser(id, name);
  return standIn;
}

/** The bot's messages in a conversation that are answers: a working status not yet replaced is not one. */
export function answers(standIn: SlackStandIn, channel: string) {
  return standIn.botMessages(channel).filter((m) => !m.text.startsWith(WORKING_STATUS));
}
