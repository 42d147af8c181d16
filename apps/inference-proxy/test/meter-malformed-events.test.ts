import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { describe, expect, it } from "vitest";
import { UsageMeter } from "../src/proxy/usage.ts";
import { frame } from "./upstream.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const concat = (parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

/** An event-stream frame whose body is not JSON (a keep-alive, a provider's plain-text note). */
function plainFrame(eventType: string, body: string): Uint8Array {
  return new EventStreamCodec(toUtf8, fromUtf8).encode({
    headers: {
      ":event-type": { type: "string", value: eventType },
      ":message-type": { type: "string", value: "event" },
    },
    body: enc(body),
  });
}

describe("an event the meter cannot read does not hide the usage after it", () => {
  it("SSE: a data line that is not JSON, in the last chunk with the usage", () => {
    const meter = new UsageMeter("anthropic", "text/event-stream");
    const start = { type: "message_start", message: { usage: { input_tokens: 5, output_tokens: 1 } } };
    meter.push(enc(`data: ${JSON.stringify(start)}\n\n`));
    // The answer's last chunk: a malformed event, then the final counts.
    meter.push(
      enc(`data: {not json\n\ndata: ${JSON.stringify({ type: "message_delta", usage: { output_tokens: 900 } })}\n\n`),
    );
    expect(meter.result()).toEqual({ inputTokens: 5, outputTokens: 900, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  it("AWS event-stream: a frame whose body is not JSON, in the same chunk as the metadata", () => {
    const meter = new UsageMeter("converse", "application/vnd.amazon.eventstream");
    const usage = { inputTokens: 30, outputTokens: 40 };
    meter.push(concat([frame("contentBlockDelta", { delta: { text: "x" } })]));
    meter.push(concat([plainFrame("note", "plain text"), frame("metadata", { usage })]));
    expect(meter.result()).toMatchObject({ inputTokens: 30, outputTokens: 40 });
  });

  it("AWS event-stream: a frame that declares no length ends the reading, and does not spin", () => {
    const meter = new UsageMeter("converse", "application/vnd.amazon.eventstream");
    meter.push(concat([new Uint8Array(16), frame("metadata", { usage: { inputTokens: 1, outputTokens: 1 } })]));
    expect(meter.result()).toMatchObject({ inputTokens: 0, outputTokens: 0 });
  });
});
