import type { SlackStandIn } from "@agentplane/testkit/slack";
import type { Logger } from "pino";
import type { SlackTeamChat, SlackTeamChatOptions } from "../../src/chat/slack/adapter.ts";
import type { FakeModel } from "./fake-model.ts";
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
