import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";

// Secrets as the runtime's own process holds them (the model keys and tokens of config.ts).
const SECRETS = {
  AGENTPLANE_TOKEN: "apt-secret-token-1234",
  CHAT_BOT_TOKEN: "xoxb-secret-bot-5678",
  GATEWAY_API_TOKEN: "gw-secret-9012",
  SOME_OPERATOR_VALUE: "operator-value-3456",
};

let fake: FakeModel;
let rt: TestRuntime | undefined;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  fake = await startFakeModel();
  for (const [name, value] of Object.entries(SECRETS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await fake.close();
});
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

/** Runs `command` with the real run_command tool in one turn and returns its parsed result. */
async function runCommand(r: TestRuntime, command: string) {
  fake.respond = scripted([calls(toolUse("run_command", { command })), text("done")]);
  const threads = await r.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const thread = threads.body.items.find((t) => t.main)?.id as string;
  const before = fake.requests.length;
  const res = await r.json("POST", `/agents/threads/${thread}/messages?stream=false`, { text: "run it" });
  expect(res.status).toBe(200);
  const [result] = fake.requests.slice(before).flatMap((q) => toolResultsOf(q.body));
  return JSON.parse(result?.content ?? "{}") as { exitCode: number; stdout: string };
}

describe("the local shell's environment", () => {
  it("keeps the runtime's secrets from commands while PATH still finds programs", async () => {
    const workspace = join(tempHome(), "ws");
    rt = await startTestRuntime(fake, { env: { SHELL_WORKSPACE_ROOT: workspace } });
    const out = await runCommand(rt, "env; printenv AGENTPLANE_TOKEN; echo PWD=$(pwd)");
    expect(out.exitCode).toBe(0);
    for (const value of Object.values(SECRETS)) expect(out.stdout).not.toContain(value);
    expect(out.stdout).not.toMatch(/^(AGENTPLANE_TOKEN|CHAT_BOT_TOKEN|GATEWAY_API_TOKEN)=/m);
    // `env` and `printenv` were found through PATH, which is passed.
    expect(out.stdout).toMatch(/^PATH=/m);
    expect(out.stdout).toContain(`PWD=${workspace}`);
  });

  it("passes the variables the operator names in SHELL_PASS_ENV, and only those", async () => {
    rt = await startTestRuntime(fake, { env: { SHELL_PASS_ENV: "SOME_OPERATOR_VALUE, MISSING_ONE" } });
    const out = await runCommand(rt, "env");
    expect(out.stdout).toContain(`SOME_OPERATOR_VALUE=${SECRETS.SOME_OPERATOR_VALUE}`);
    expect(out.stdout).not.toContain(SECRETS.AGENTPLANE_TOKEN);
    expect(out.stdout).not.toContain("MISSING_ONE");
  });
});
