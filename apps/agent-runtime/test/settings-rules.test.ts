import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { createRuntime } from "../src/runtime.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { fakeModelEnv, startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

/** Starts a runtime whose log lines (JSON) are collected, and returns them with its profile. */
async function startLogged(env: Record<string, string>): Promise<{ logs: Array<Record<string, unknown>> }> {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: "info" }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const config = loadConfig({ ...fakeModelEnv(fake, tempHome()), ...env });
  const runtime = await createRuntime(config, { logger, modelOptions: { maxRetries: 0 } });
  try {
    const { url } = await runtime.listen(0, "127.0.0.1");
    expect((await fetch(`${url}/health`)).status).toBe(200);
  } finally {
    await runtime.close();
  }
  return { logs };
}

describe("gateway mode without a token", () => {
  it("starts and logs a warning naming GATEWAY_API_TOKEN", async () => {
    const { logs } = await startLogged({ GATEWAY_API_URL: fake.url, CLOUD_B_API_KEY: "" });
    const warning = logs.find((l) => l.variable === "GATEWAY_API_TOKEN");
    expect(warning?.level).toBe(40);
    expect(String(warning?.msg)).toMatch(/GATEWAY_API_TOKEN is not set while GATEWAY_API_URL is/);
  });

  it("does not warn when the token is set, nor outside gateway mode", async () => {
    // A host without bubblewrap adds a warning of its own (SHELL_ISOLATION), not this test's concern.
    const warnings = (logs: Array<Record<string, unknown>>) =>
      logs.filter((l) => l.level === 40 && l.variable !== "SHELL_ISOLATION");
    const withToken = await startLogged({ GATEWAY_API_URL: fake.url, GATEWAY_API_TOKEN: "apl_test" });
    expect(warnings(withToken.logs)).toEqual([]);
    const direct = await startLogged({});
    expect(warnings(direct.logs)).toEqual([]);
  });
});

/**
 * A turn on the main thread in which the model calls update_settings with `input` once: the
 * tool's result, as the model was sent it.
 */
async function settingsToolTurn(
  rt: TestRuntime,
  input: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  fake.respond = (body) => {
    const messages = body.messages as Array<{ content: Array<{ type: string }> }>;
    if (messages.at(-1)?.content.some((b) => b.type === "tool_result"))
      return { content: [{ type: "text", text: "Done." }] };
    return { content: [{ type: "tool_use", id: "toolu_1", name: "update_settings", input }] };
  };
  const threads = await rt.json<{ items: Array<{ id: string }> }>("GET", "/agents/threads");
  const thread = threads.body.items[0]?.id as string;
  const turn = await rt.request("POST", `/agents/threads/${thread}/messages?stream=false`, { text: "change it" });
  expect(turn.status).toBe(200);
  const messages = (fake.requests.at(-1)?.body.messages ?? []) as Array<{ content: Array<Record<string, unknown>> }>;
  return messages.at(-1)?.content.find((b) => b.type === "tool_result");
}

/** A runtime on cloud-a-alt (bare ids configured), pointed at the fake model. */
function startAlt(): Promise<TestRuntime> {
  return startTestRuntime(fake, {
    env: {
      LLM_PROVIDER: "cloud-a-alt",
      CLOUD_A_BEARER_TOKEN: "alt-key",
      CLOUD_A_ALT_BASE_URL: `${fake.url}/anthropic`,
      CLOUD_A_MODEL_ID: "anthropic.claude-sonnet-4-5",
      CLOUD_A_CLASSIFICATION_MODEL_ID: "anthropic.claude-haiku-4-5",
    },
  });
}

interface Problem {
  type: string;
  detail: string;
  errors: Array<{ pointer: string; message: string }>;
}

describe("cloud-a-alt model overrides must be bare ids", () => {
  it("PATCH /agents/models rejects a regional prefix or a version suffix with a 400 naming the rule", async () => {
    const rt = await startAlt();
    try {
      const res = await rt.request("PATCH", "/agents/models", {
        main: "us.anthropic.claude-sonnet-4-5",
        heartbeat: "anthropic.claude-haiku-4-5",
        cron: "anthropic.claude-sonnet-4-5-20250929-v1:0",
      });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await res.json()) as Problem;
      expect(problem.detail).toMatch(/cloud-a-alt takes bare model ids/);
      expect(problem.errors.map((e) => e.pointer)).toEqual(["/body/main", "/body/cron"]);
      expect(problem.errors[0]?.message).toMatch(/regional inference-profile prefix/);
      expect(problem.errors[1]?.message).toMatch(/version suffix/);

      // Nothing was written, not even the valid heartbeat value.
      const profile = await rt.json("GET", "/agents/profile");
      expect(profile.body.overrides).toEqual({ main: null, heartbeat: null, cron: null });

      const ok = await rt.json("PATCH", "/agents/models", { main: "anthropic.claude-opus-4-1", cron: "" });
      expect(ok.status).toBe(200);
      expect(ok.body.overrides).toEqual({ main: "anthropic.claude-opus-4-1", heartbeat: null, cron: null });
    } finally {
      await rt.close();
    }
  });

  it("other providers keep prefixed ids (the rule is cloud-a-alt's)", async () => {
    const rt = await startTestRuntime(fake);
    try {
      const ok = await rt.json("PATCH", "/agents/models", { main: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" });
      expect(ok.status).toBe(200);
    } finally {
      await rt.close();
    }
  });

  it("the settings tool refuses the same ids and changes nothing", async () => {
    const rt = await startAlt();
    try {
      const result = await settingsToolTurn(rt, { verbose: true, mainModel: "us.anthropic.claude-sonnet-4-5" });
      expect(result?.is_error).toBe(true);
      expect(String(result?.content)).toMatch(/cloud-a-alt takes bare model ids/);
      const profile = await rt.json("GET", "/agents/profile");
      expect(profile.body).toMatchObject({ verbose: false, overrides: { main: null } });
    } finally {
      fake.respond = (body) => ({ content: [{ type: "text", text: `echo ${String(body.model)}` }] });
      await rt.close();
    }
  });
});

describe("model overrides must be model ids, on every provider", () => {
  it("refuses ids that would change a provider's request path, through the API and the settings tool", async () => {
    const rt = await startTestRuntime(fake);
    try {
      for (const bad of ["../../v1/orgs", "gpt-4o?x=1", "a//b", "model#frag", "my model", "%2e%2e"]) {
        const refused = await rt.json<{ errors?: Array<{ pointer: string }> }>("PATCH", "/agents/models", {
          cron: bad,
        });
        expect(refused.status, bad).toBe(400);
        expect(refused.body.errors?.[0]?.pointer).toBe("/body/cron");
      }
      for (const good of ["claude-sonnet-4-6", "meta/llama-3.1-70b", "gpt-4o-2024-08-06", "model@2024+v2"]) {
        expect((await rt.json("PATCH", "/agents/models", { cron: good })).status, good).toBe(200);
      }
      const result = await settingsToolTurn(rt, { mainModel: "../../v1/orgs" });
      expect(result?.is_error).toBe(true);
      expect(String(result?.content)).toMatch(/is not a model id/);
      expect((await rt.json("GET", "/agents/profile")).body).toMatchObject({ overrides: { main: null } });
    } finally {
      fake.respond = (body) => ({ content: [{ type: "text", text: `echo ${String(body.model)}` }] });
      await rt.close();
    }
  });
});

describe("a chat message the platform forwards for a caller without agent:manage", () => {
  /** The tools the model was offered in the last call, and the turn's tool result. */
  async function turnWith(rt: TestRuntime, headers: Record<string, string>) {
    fake.respond = (body) => {
      const messages = body.messages as Array<{ content: Array<{ type: string }> | string }>;
      const last = messages.at(-1)?.content;
      if (Array.isArray(last) && last.some((b) => b.type === "tool_result"))
        return { content: [{ type: "text", text: "Done." }] };
      return { content: [{ type: "tool_use", id: "toolu_1", name: "update_settings", input: { verbose: true } }] };
    };
    const threads = await rt.json<{ items: Array<{ id: string }> }>("GET", "/agents/threads");
    const thread = threads.body.items[0]?.id as string;
    const from = fake.requests.length;
    const turn = await rt.request(
      "POST",
      `/agents/threads/${thread}/messages?stream=false`,
      { text: "turn verbose on" },
      headers,
    );
    expect(turn.status).toBe(200);
    const calls = fake.requests.slice(from);
    const offered = ((calls[0]?.body.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
    const messages = (calls.at(-1)?.body.messages ?? []) as Array<{ content: Array<Record<string, unknown>> }>;
    const result = messages.at(-1)?.content.find((b) => b.type === "tool_result");
    const profile = await rt.json<{ verbose: boolean }>("GET", "/agents/profile");
    return { offered, result, verbose: profile.body.verbose };
  }

  it("is not offered the tools that change the agent, and a call to one changes nothing", async () => {
    const rt = await startTestRuntime(fake);
    try {
      for (const said of ["false", "no"]) {
        const denied = await turnWith(rt, { "x-agentplane-agent-manage": said });
        expect(denied.offered).not.toContain("update_settings");
        expect(denied.offered).not.toContain("manage_schedules");
        expect(denied.offered.length).toBeGreaterThan(0);
        expect(denied.result?.is_error).toBe(true);
        expect(denied.verbose).toBe(false);
      }
      // The platform saying the caller may manage, or the runtime's own clients (no header): offered.
      const allowed = await turnWith(rt, { "x-agentplane-agent-manage": "true" });
      expect(allowed.offered).toContain("update_settings");
      expect(allowed.verbose).toBe(true);
      await rt.request("PATCH", "/agents/verbose", { verbose: false });
      const own = await turnWith(rt, {});
      expect(own.offered).toContain("manage_schedules");
      expect(own.verbose).toBe(true);
    } finally {
      await rt.close();
    }
  });
});
