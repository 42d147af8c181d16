import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";
import type { TeamChatAdapter } from "../../src/chat/team-chat.ts";
import { loadConfig } from "../../src/config.ts";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../src/runtime.ts";
import type { FakeModel } from "./fake-model.ts";

export interface TestRuntime {
  runtime: Runtime;
  url: string;
  home: string;
  close(): Promise<void>;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  json<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), "agent-runtime-"));
}

/** The environment that points provider cloud-b at the fake model. */
export function fakeModelEnv(fake: FakeModel, home: string): Record<string, string> {
  return {
    AGENT_HOME: home,
    LLM_PROVIDER: "cloud-b",
    CLOUD_B_API_KEY: "test-key",
    CLOUD_B_BASE_URL: `${fake.url}/anthropic/v1`,
    LOG_LEVEL: "silent",
  };
}

/** A real runtime on a real SQLite file in a temp dir, listening on port 0. */
export async function startTestRuntime(
  fake: FakeModel,
  options: {
    env?: Record<string, string>;
    home?: string;
    teamChat?: TeamChatAdapter | null;
    logger?: Logger;
    runtimeOptions?: Partial<RuntimeOptions>;
  } = {},
): Promise<TestRuntime> {
  const home = options.home ?? tempHome();
  const config = loadConfig({ ...fakeModelEnv(fake, home), ...options.env });
  const runtime = await createRuntime(config, {
    logger: options.logger ?? pino({ level: "silent" }),
    // Left out, the runtime builds the Slack adapter when the environment has CHAT_BOT_TOKEN.
    ...(options.teamChat !== undefined ? { teamChat: options.teamChat } : {}),
    modelOptions: { maxRetries: 0, timeoutMs: 20_000 },
    ...options.runtimeOptions,
  });
  const { url } = await runtime.listen(0, "127.0.0.1");
  const request = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
  return {
    runtime,
    url,
    home,
    close: () => runtime.close(),
    request,
    async json<T>(method: string, path: string, body?: unknown) {
      const res = await request(method, path, body);
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
    },
  };
}

export interface SseEvent {
  event: string;
  data: string;
}

export async function readSse(res: Response): Promise<SseEvent[]> {
  const text = await res.text();
  const events: SseEvent[] = [];
  for (const frame of text.split("\n\n")) {
    if (!frame.trim()) continue;
    let event = "message";
    const data: string[] = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    events.push({ event, data: data.join("\n") });
  }
  return events;
}

export async function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A logger whose records are kept in memory, to assert on warnings. */
export function capturingLogger(): { logger: Logger; records: Array<Record<string, unknown>> } {
  const records: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) records.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: "debug" }, stream), records };
}
