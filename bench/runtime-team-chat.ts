// Team chat (Slack adapter) benchmark (issue "Team chat: the Slack adapter over Socket Mode"):
//   node scripts/bootstrap.mjs node bench/runtime-team-chat.ts
// 1. Ack latency of 200 envelopes arriving at once: 200 DMs from the owner, each a turn for the
//    agent (they queue on the one DM conversation), from the Slack stand-in sending the frame to it
//    receiving the ack. Aim: every ack < 3 s, p99 < 100 ms. Baseline in the same run: 200 envelopes
//    of a type the adapter acks and ignores (no routing, no turn).
// 2. DM -> reply, one at a time, against the instant local model: from the DM's event frame to the
//    answer in Slack: the working status (chat.postMessage) replaced by the answer (chat.update),
//    with the history re-read and the turn between. Baseline: the same
//    turn through web chat (POST /agents/threads/{id}/messages?stream=false).
// Everything (stand-in, SDK clients, runtime) shares one process, as the runtime tests do.
// BENCH_ENVELOPES (200) and BENCH_TURNS (50) change the sizes.
import { startSlackStandIn } from "@agentplane/testkit/slack";
import type { SlackTeamChat } from "../apps/agent-runtime/src/chat/slack/adapter.ts";
import { WORKING_STATUS } from "../apps/agent-runtime/src/chat/slack/history.ts";
import { createRuntime } from "../apps/agent-runtime/src/runtime.ts";
import { fmt } from "./lib.ts";
import { instantModelConfig, percentile, silent, startInstantModel } from "./runtime-lib.ts";

const ENVELOPES = Number(process.env.BENCH_ENVELOPES ?? 200);
const TURNS = Number(process.env.BENCH_TURNS ?? 50);
const OWNER = "U0OWNER";

const line = (label: string, samples: number[]) =>
  `${label.padEnd(40)} p50 ${fmt(percentile(samples, 50), 2).padStart(8)} ms   p99 ${fmt(percentile(samples, 99), 2).padStart(8)} ms   max ${fmt(Math.max(...samples), 2).padStart(8)} ms`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("benchmark condition not met in time");
    await sleep(5);
  }
}

const model = await startInstantModel();
const standIn = await startSlackStandIn({ pingIntervalMs: 10_000 });
standIn.workspace.addUser(OWNER, "olivia");
const config = instantModelConfig(model.url, {
  CHAT_BOT_TOKEN: standIn.botToken,
  CHAT_APP_TOKEN: standIn.appToken,
  CHAT_API_URL: standIn.apiUrl,
  CHAT_OWNER_ID: OWNER,
});
const runtime = await createRuntime(config, { logger: silent, scheduleTimer: false });
const { url } = await runtime.listen(0, "127.0.0.1");
const slack = runtime.deps.teamChat as SlackTeamChat;
await until(() => slack.status().state === "connected", 10_000);
const dm = standIn.workspace.dm(OWNER).id;
/** The bot's answers in the DM (a working status not yet replaced is not one). */
const answers = () => standIn.botMessages(dm).filter((m) => !m.text.startsWith(WORKING_STATUS)).length;

// Warm-up: a few turns through both paths.
for (let i = 0; i < 5; i++) {
  const before = answers();
  standIn.say(OWNER, `warm-up ${i}`);
  await until(() => answers() > before);
}

console.log(`\n-- ack latency: ${ENVELOPES} envelopes sent at once --`);
standIn.envelopes.clear();
for (let i = 0; i < ENVELOPES; i++) standIn.sendEnvelope("bench_ignored", { n: i });
await until(() => standIn.ackLatenciesMs().length === ENVELOPES);
const ignored = standIn.ackLatenciesMs();
standIn.envelopes.clear();
const turnsBefore = slack.inbound?.turnsFinished ?? 0;
const burstStart = performance.now();
for (let i = 0; i < ENVELOPES; i++) standIn.say(OWNER, `burst ${i}`);
await until(() => standIn.ackLatenciesMs().length === ENVELOPES);
const acks = standIn.ackLatenciesMs();
await until(() => (slack.inbound?.turnsFinished ?? 0) - turnsBefore >= ENVELOPES, 300_000);
const burstSeconds = (performance.now() - burstStart) / 1000;
console.log(line(`${ENVELOPES} DMs, each a turn (acked)`, acks));
console.log(line("baseline: envelopes acked and ignored", ignored));
console.log(
  `every ack < 3 s: ${Math.max(...acks) < 3000 ? "met" : "NOT met"}; p99 < 100 ms: ${percentile(acks, 99) < 100 ? "met" : "not met"}; the ${ENVELOPES} turns then took ${fmt(burstSeconds, 1)} s (${fmt(ENVELOPES / burstSeconds, 1)} turns/s, one conversation, in order)`,
);

console.log(`\n-- DM -> reply vs web chat turn, one at a time, ${TURNS} each (instant local model) --`);
const slackTurns: number[] = [];
const webTurns: number[] = [];
const webThread = runtime.deps.messages.mainWebThreadId();
// Alternating rounds, so that the machine's load moves both series alike.
for (let i = 0; i < TURNS; i++) {
  const before = answers();
  let t = performance.now();
  standIn.say(OWNER, `question ${i}`);
  await new Promise<void>((resolve) => {
    standIn.api.onPosted = (channel) => {
      if (channel === dm && answers() > before) resolve();
    };
  });
  slackTurns.push(performance.now() - t);
  t = performance.now();
  const res = await fetch(`${url}/agents/threads/${webThread}/messages?stream=false`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: `question ${i}` }),
  });
  await res.text();
  webTurns.push(performance.now() - t);
}
standIn.api.onPosted = undefined;
console.log(line("DM -> reply in Slack", slackTurns));
console.log(line("baseline: web chat turn (JSON)", webTurns));
console.log(
  `DM -> reply / web turn p50: ${fmt(percentile(slackTurns, 50) / percentile(webTurns, 50))}x (the DM adds the history re-read, the working status and its replacement by the answer; the stand-in answers in the same process)`,
);

await runtime.close();
await standIn.close();
model.close();
process.exit(0);
