// The inference proxy as a user's code sees it: the Anthropic SDK (its own HTTP client, retries off)
// calling the provider stand-in directly, through a framework-free node:http pass-through (the
// floor of any proxy in its own process) and through the gateway (the Agentplane token in
// `x-api-key`, as the SDK sends its key), alternating round by round. One call at a time shows
// what the added latency costs a sequential caller; ten at once show the throughput left when the
// SDK client, the proxy, Postgres and the upstream share the machine's cores.
import Anthropic from "@anthropic-ai/sdk";
import { fmt } from "./lib.ts";

const REQUEST = { model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] };

/** Calls per second with `concurrency` callers for `seconds`. */
async function rate(client: Anthropic, concurrency: number, seconds: number): Promise<number> {
  let calls = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await client.messages.create(REQUEST);
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - start) / 1000);
}

/** Base URLs (the SDK appends /v1/messages) and the key each is called with. */
export interface SdkTargets {
  direct: string;
  node: string;
  gateway: { baseURL: string; token: string };
}

export async function throughSdk(targets: SdkTargets, options: { seconds: number; rounds: number }): Promise<void> {
  const client = (baseURL: string, apiKey: string) => new Anthropic({ baseURL, apiKey, maxRetries: 0 });
  const clients = {
    direct: client(targets.direct, "upstream-key"),
    node: client(targets.node, "upstream-key"),
    gateway: client(targets.gateway.baseURL, targets.gateway.token),
  };
  const kinds = ["direct", "node", "gateway"] as const;
  console.log(
    `through the Anthropic SDK, ${options.rounds} rounds of ${options.seconds} s each (direct, node:http pass-through, gateway alternating):`,
  );
  for (const concurrency of [1, 10]) {
    const totals = { direct: 0, node: 0, gateway: 0 };
    for (const kind of kinds) await rate(clients[kind], concurrency, 1);
    for (let round = 0; round < options.rounds; round++) {
      for (const kind of kinds) totals[kind] += await rate(clients[kind], concurrency, options.seconds);
    }
    const [d, n, g] = kinds.map((kind) => totals[kind] / options.rounds) as [number, number, number];
    const added = (r: number) => (concurrency === 1 ? `, +${fmt(1000 / r - 1000 / d, 3)} ms a call` : "");
    console.log(
      [
        `  ${concurrency} at a time: direct ${fmt(d, 0)} calls/s`,
        `node:http ${fmt(n, 0)} (${fmt(n / d)}x direct${added(n)})`,
        `gateway ${fmt(g, 0)} (${fmt(g / d)}x direct${added(g)}; ${fmt(g / n)}x node:http)`,
      ].join(", "),
    );
  }
}
