import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";

let fake: FakeModel;
let rt: TestRuntime | undefined;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

async function turn(r: TestRuntime, message: string) {
  const threads = await r.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const thread = threads.body.items.find((t) => t.main)?.id as string;
  return r.json<{ delivered: Array<{ text: string }> }>("POST", `/agents/threads/${thread}/messages?stream=false`, {
    text: message,
  });
}

function writeSkill(dir: string, name: string, description: string, body: string): string {
  mkdirSync(join(dir, name), { recursive: true });
  const file = join(dir, name, "SKILL.md");
  writeFileSync(file, `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`);
  return file;
}

describe("skills", () => {
  it("shows names and descriptions, loads a body on demand and picks up changes", async () => {
    const home = tempHome();
    const skillsDir = join(home, "skills");
    writeSkill(skillsDir, "release-notes", "Write release notes from merged changes", "SECRET BODY: use headings");
    mkdirSync(join(skillsDir, "broken"));
    writeFileSync(join(skillsDir, "broken", "SKILL.md"), "no front matter");
    rt = await startTestRuntime(fake, { home });
    fake.respond = scripted([calls(toolUse("use_skill", { name: "release-notes" })), text("Loaded.")]);
    const before = fake.requests.length;
    await turn(rt, "write release notes");
    const first = fake.requests[before]?.body as { system: string };
    expect(first.system).toContain("- release-notes: Write release notes from merged changes");
    // Only names and descriptions up front: the body is not in the prompt until it is loaded.
    expect(first.system).not.toContain("SECRET BODY");
    const [loaded] = toolResultsOf(fake.requests[before + 1]?.body ?? {});
    expect(loaded?.is_error).toBe(false);
    expect(JSON.parse(loaded?.content ?? "{}").instructions).toBe("SECRET BODY: use headings");

    // A new skill and an edited body apply on the next turn, without a restart.
    writeSkill(skillsDir, "triage", "Triage incoming alerts", "step one");
    const edited = writeSkill(skillsDir, "release-notes", "Write release notes", "NEW BODY");
    utimesSync(edited, new Date(), new Date(Date.now() + 5000));
    fake.respond = scripted([calls(toolUse("use_skill", { name: "release-notes" })), text("ok")]);
    const again = fake.requests.length;
    await turn(rt, "again");
    const system = String(fake.requests[again]?.body.system);
    expect(system).toContain("- triage: Triage incoming alerts");
    expect(system).toContain("- release-notes: Write release notes\n");
    expect(JSON.parse(toolResultsOf(fake.requests[again + 1]?.body ?? {})[0]?.content ?? "{}").instructions).toBe(
      "NEW BODY",
    );
  });

  it("answers an unknown skill with a tool error listing the known ones", async () => {
    rt = await startTestRuntime(fake);
    fake.respond = scripted([calls(toolUse("use_skill", { name: "nope" })), text("ok")]);
    const before = fake.requests.length;
    await turn(rt, "x");
    const [result] = toolResultsOf(fake.requests[before + 1]?.body ?? {});
    expect(result).toMatchObject({ is_error: true });
    expect(result?.content).toMatch(/No skill named nope/);
  });
});

describe("plugins", () => {
  it("registers plugin tools; a throwing plugin and a duplicate tool name are reported and skipped", async () => {
    const home = tempHome();
    const dir = join(home, "plugins");
    mkdirSync(join(dir, "folder-plugin"), { recursive: true });
    writeFileSync(
      join(dir, "a-weather.mjs"),
      `export default {
        name: "weather",
        register(api) {
          api.registerTool({
            name: "get_weather",
            description: "Current weather for a city",
            inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            handler: async ({ city }) => ({ content: "Sunny in " + city, isError: false }),
          });
        },
      };`,
    );
    writeFileSync(
      join(dir, "b-broken.mjs"),
      `export default function register(api) {
        api.registerTool({ name: "half_done", description: "x", inputSchema: { type: "object" }, handler: () => ({ content: "", isError: false }) });
        throw new Error("cannot reach its backend");
      }`,
    );
    writeFileSync(
      join(dir, "folder-plugin", "index.mjs"),
      `export default (api) => {
        api.registerTool({ name: "get_weather", description: "dup", inputSchema: { type: "object" }, handler: () => ({ content: "dup", isError: false }) });
        api.registerTool({ name: "run_command", description: "dup core", inputSchema: { type: "object" }, handler: () => ({ content: "dup", isError: false }) });
        api.registerTool({ name: "echo_upper", description: "Upper-case a text", inputSchema: { type: "object" }, handler: (input) => ({ content: String(input.text).toUpperCase(), isError: false }) });
      };`,
    );
    const { logger, records } = capturingLogger();
    rt = await startTestRuntime(fake, { home, logger });
    const reports = rt.runtime.deps.plugins;
    expect(reports.map((r) => [r.plugin, r.status, r.tools])).toEqual([
      ["weather", "loaded", ["get_weather"]],
      [join(dir, "b-broken.mjs"), "failed", []],
      [join(dir, "folder-plugin", "index.mjs"), "loaded", ["echo_upper"]],
    ]);
    expect(reports[1]?.error).toBe("cannot reach its backend");
    expect(reports[2]?.skipped.map((s) => s.tool)).toEqual(["get_weather", "run_command"]);
    expect(records.filter((r) => r.msg === "plugin tool skipped").map((r) => r.tool)).toEqual([
      "get_weather",
      "run_command",
    ]);
    expect(records.some((r) => r.msg === "plugin failed to load; skipped" && r.level === 50)).toBe(true);

    fake.respond = scripted([
      calls(toolUse("get_weather", { city: "Oslo" }), toolUse("echo_upper", { text: "hi" }), toolUse("half_done", {})),
      text("It is sunny."),
    ]);
    const before = fake.requests.length;
    const res = await turn(rt, "weather in Oslo?");
    expect(res.body.delivered.map((m) => m.text)).toEqual(["It is sunny."]);
    const offered = ((fake.requests[before]?.body.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
    expect(offered).toContain("get_weather");
    expect(offered).not.toContain("half_done");
    const results = toolResultsOf(fake.requests[before + 1]?.body ?? {});
    expect(results.map((r) => [r.content, r.is_error])).toEqual([
      ["Sunny in Oslo", false],
      ["HI", false],
      ["Unknown tool half_done", true],
    ]);
  });
});
