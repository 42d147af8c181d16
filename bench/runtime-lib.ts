// Helpers of the agent runtime benchmarks: an instant local model speaking the Messages API (SSE),
// a logger that drops everything, percentiles.

import { mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type RuntimeConfig } from "../apps/agent-runtime/src/config.ts";
import type { RuntimeOptions } from "../apps/agent-runtime/src/runtime.ts";

/** A runtime configuration in a fresh home on the instant model: no embeddings, heartbeat or compaction. */
export function instantModelConfig(modelUrl: string, extra: Record<string, string> = {}): RuntimeConfig {
  return loadConfig({
    AGENT_HOME: mkdtempSync(join(tmpdir(), "bench-runtime-")),
    LLM_PROVIDER: "cloud-b",
    CLOUD_B_API_KEY: "bench",
    CLOUD_B_BASE_URL: `${modelUrl}/anthropic/v1`,
    CLOUD_B_EMBEDDING_MODEL_ID: "",
    HEARTBEAT_INTERVAL_MINUTES: "0",
    COMPACTION_THRESHOLD_PERCENT: "0",
    ...extra,
  });
}

// A logger that drops everything (pino is the runtime's dependency, not the bench package's).
export const silent: NonNullable<RuntimeOptions["logger"]> = new Proxy({} as NonNullable<RuntimeOptions["logger"]>, {
  get: (_target, key) => (key === "child" ? () => silent : key === "level" ? "silent" : () => undefined),
});

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** An instant model: a tool call first (when tools are offered and no result came back yet), then text. */
export function startInstantModel(): Promise<{ url: string; close: () => void }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      const body = JSON.parse(raw || "{}") as {
        messages?: Array<{ content: unknown }>;
        tools?: unknown[];
        model?: string;
      };
      const last = body.messages?.at(-1)?.content;
      const sawResult = Array.isArray(last) && last.some((b: { type?: string }) => b.type === "tool_result");
      const wantsTool = (body.tools?.length ?? 0) > 0 && !sawResult && JSON.stringify(last).includes("use a tool");
      const block = wantsTool
        ? { type: "tool_use", id: "toolu_1", name: "list_files", input: {} }
        : { type: "text", text: "" };
      const events: unknown[] = [
        {
          type: "message_start",
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: body.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 10, output_tokens: 0 },
          },
        },
        { type: "content_block_start", index: 0, content_block: block },
        wantsTool
          ? { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{}" } }
          : { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Done." } },
        { type: "content_block_stop", index: 0 },
        {
          type: "message_delta",
          delta: { stop_reason: wantsTool ? "tool_use" : "end_turn", stop_sequence: null },
          usage: { output_tokens: 3 },
        },
        { type: "message_stop" },
      ];
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const e of events) res.write(`event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`);
      res.end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }),
    ),
  );
}
