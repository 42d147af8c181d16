// Bench helper: a provider stand-in that answers at once (Anthropic Messages JSON, or SSE). With
// `?hold=1` a stream sends its first event and stays open until POST /release. Prints its URL.
import { createServer } from "node:http";

const message = JSON.stringify({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-haiku-4-5",
  content: [{ type: "text", text: "ok" }],
  stop_reason: "end_turn",
  usage: { input_tokens: 10, output_tokens: 2 },
});
const events = [
  { type: "message_start", message: { model: "claude-haiku-4-5", usage: { input_tokens: 10, output_tokens: 1 } } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } },
  { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } },
  { type: "message_stop" },
].map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
let held: (() => void)[] = [];

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    if (req.url === "/release") {
      for (const release of held) release();
      held = [];
      res.end("released");
      return;
    }
    const stream = Buffer.concat(chunks).includes('"stream":true');
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(message);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(events[0]);
    const rest = () => res.end(events.slice(1).join(""));
    if (req.url?.includes("hold=1")) held.push(rest);
    else rest();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
