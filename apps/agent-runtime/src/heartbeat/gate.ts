import type { Logger } from "pino";
import type { ModelClient } from "../models/provider.ts";
import { textOf } from "../turns/run-turn.ts";

export type GateDecision =
  | { decision: "DELIVER" | "SUPPRESS"; failedOpen: false }
  | { decision: "DELIVER"; failedOpen: true; reason: string };

const GATE_SYSTEM =
  "You review the result of an agent's periodic background check before anyone sees it. " +
  "Answer DELIVER if it tells the user something new that needs attention or action (an alert, a problem, a " +
  "deadline, a finding). Answer SUPPRESS if it only says that everything is fine, nothing changed, or nothing " +
  "needs doing. Answer with exactly one word: DELIVER or SUPPRESS.";

/**
 * The DELIVER/SUPPRESS gate: one call to the active provider's classification model with the
 * run's final text. Anything but a clear SUPPRESS delivers (fail open), and a failure says why.
 */
export async function classifyHeartbeat(
  model: ModelClient,
  classificationModelId: string,
  finalText: string,
  logger: Logger,
): Promise<GateDecision> {
  try {
    const message = await model.createMessage({
      model: classificationModelId,
      max_tokens: 8,
      system: GATE_SYSTEM,
      messages: [{ role: "user", content: `The check's result:\n\n${finalText}` }],
    });
    const answer = textOf(message.content).toUpperCase();
    const deliver = /\bDELIVER\b/.test(answer);
    const suppress = /\bSUPPRESS\b/.test(answer);
    if (deliver !== suppress) return { decision: deliver ? "DELIVER" : "SUPPRESS", failedOpen: false };
    const reason = `the classification model answered neither DELIVER nor SUPPRESS: ${JSON.stringify(answer.slice(0, 80))}`;
    logger.warn({ model: classificationModelId, reason }, "heartbeat gate failed open; delivering");
    return { decision: "DELIVER", failedOpen: true, reason };
  } catch (err) {
    const reason = `the classification call failed: ${(err as Error).message.slice(0, 300)}`;
    logger.warn({ model: classificationModelId, reason }, "heartbeat gate failed open; delivering");
    return { decision: "DELIVER", failedOpen: true, reason };
  }
}

const SENTINELS = /\[?\b(?:HEARTBEAT_OK|NO_REPLY|DELIVER|SUPPRESS)\b\]?[.!:]?/g;

/**
 * The line without the spaces and tabs it ends with. Not `/[ \t]+$/`: that is tried again from
 * every space of a run that does not end the line, and a model's line of 100,000 spaces before a
 * word held the event loop for 10 s.
 */
function trimSpacesEnd(line: string): string {
  let end = line.length;
  while (end > 0 && (line[end - 1] === " " || line[end - 1] === "\t")) end--;
  return line.slice(0, end);
}

/** The text a channel gets: gate and check tokens removed, whitespace tidied. */
export function withoutSentinels(text: string): string {
  return text
    .replace(SENTINELS, "")
    .split("\n")
    .map(trimSpacesEnd)
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
