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
  const started = performance.now();
  await deps.tracing.run("webhook", { threadId: thread.id, runId: run.id }, async () => {
    const outcome = await runAgentTurn(deps, { threadId: thread.id, text: prompt, source, runId: run.id });
    const answer = outcome.delivered.map((m) => m.text).join("\n\n") || "(The agent finished without a text answer.)";
    await deliver(deliveryDeps(deps), run.deliver_to, `${webhookLabel(run.subscription)}\n\n${answer}`, source);
  });
  deps.telemetry.emit("run.delivered", {
    "run.id": run.id,
    "webhook.subscription": run.subscription,
    "run.duration_ms": performance.now() - started,
  });
}

/**
 * One readable sentence for the failure notice: what failed, the status and the run id. A model
 * API error arrives as `<status> <problem or error JSON>`; the JSON stays in the run record and log.
 */
export function failureSentence(error: string, runId: string): string {
  const http = /^(\d{3})\s+(\{[\s\S]*)$/.exec(error.trim());
  let what = error.split("\n")[0]?.slice(0, 200) ?? "";
  if (http) {
    let reason = "";
    try {
      const body = JSON.parse(http[2] as string) as {
        title?: unknown;
        detail?: unknown;
        error?: { message?: unknown };
        message?: unknown;
      };
      const text = [body.title, body.detail, body.error?.message, body.message].find((v) => typeof v === "string");
      reason = typeof text === "string" ? text.slice(0, 160) : "";
    } catch {
      // The run record keeps a truncated error: take the title from what is left.
      reason = /"(?:title|message)"\s*:\s*"([^"]{1,160})"/.exec(http[2] as string)?.[1] ?? "";
    }
    what = `the model call answered status ${http[1]}${reason ? ` (${reason.replace(/\.$/, "")})` : ""}`;
  } else if (/^\d{3}\s/.test(error)) {
    what = `the model call answered status ${error.slice(0, 3)}`;
  }
  return `${what.replace(/\.$/, "")}. Run ${runId}.`;
}

export async function notifyWebhookFailure(deps: RuntimeDeps, run: QueuedRun, error: string): Promise<void> {
  deps.telemetry.emit("run.failed", { "run.id": run.id, "webhook.subscription": run.subscription });
  const text = `${webhookLabel(run.subscription)}\n\nThe run for event \`${run.event}\` failed: ${failureSentence(error, run.id)}`;
  await deliver(deliveryDeps(deps), run.deliver_to, text, `webhook:${run.subscription}`);
}
