import { deliver } from "../chat/deliver.ts";
import { deliveryDeps, type RuntimeDeps } from "../deps.ts";
import { runAgentTurn } from "../services/agent-turns.ts";
import type { QueuedRun } from "./run-queue.ts";
import { renderPrompt, webhookLabel } from "./template.ts";

/**
 * One agent-mode webhook run: the rendered prompt becomes a turn in a thread of its own (stored,
 * not listed); what the turn delivers is posted to the target under the webhook label.
 */
export async function executeWebhookRun(deps: RuntimeDeps, run: QueuedRun): Promise<void> {
  const payload = JSON.parse(run.payload) as Record<string, unknown>;
  const prompt = renderPrompt(run.prompt, payload, run.event, run.subscription);
  const thread = await deps.messages.createThread({
    kind: "webhook",
    title: `Webhook ${run.subscription} ${run.id}`,
    externalId: run.id,
  });
  const source = `webhook:${run.subscription}`;
  const outcome = await runAgentTurn(deps, { threadId: thread.id, text: prompt, source });
  const answer = outcome.delivered.map((m) => m.text).join("\n\n") || "(The agent finished without a text answer.)";
  await deliver(deliveryDeps(deps), run.deliver_to, `${webhookLabel(run.subscription)}\n\n${answer}`, source);
}

export async function notifyWebhookFailure(deps: RuntimeDeps, run: QueuedRun, error: string): Promise<void> {
  const text = `${webhookLabel(run.subscription)}\n\nThe run for event \`${run.event}\` failed: ${error}`;
  await deliver(deliveryDeps(deps), run.deliver_to, text, `webhook:${run.subscription}`);
}
