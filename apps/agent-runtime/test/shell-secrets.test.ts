import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapWorks } from "../src/tools/local-isolation.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";

const DOTENV_SECRET = "dotenv-model-key-5a7c1e";

let fake: FakeModel;
let rt: TestRuntime | undefined;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

/** A runtime home with a `.env` holding a secret, as the installer leaves it. */
function homeWithDotenv(): string {
  const home = tempHome();
  writeFileSync(join(home, ".env"), `CLOUD_B_API_KEY=${DOTENV_SECRET}\n`, { mode: 0o600 });
  mkdirSync(join(home, "plugins"));
  return home;
}

/** Runs the tool calls in one turn and returns their results in order. */
async function toolCalls(r: TestRuntime, ...uses: ReturnType<typeof toolUse>[]) {
  fake.respond = scripted([calls(...uses), text("done")]);
  const threads = await r.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const thread = threads.body.items.find((t) => t.main)?.id as string;
  const before = fake.requests.length;
  const res = await r.json("POST", `/agents/threads/${thread}/messages?stream=false`, { text: "go" });
  expect(res.status).toBe(200);
  return fake.requests.slice(before).flatMap((q) => toolResultsOf(q.body));
}

/** Lines of this process's environment as it started (what /proc/<pid>/environ shows) that commands must not see. */
function ownStartEnvironment(): string[] {
  const passed =
    /^(PATH|HOME|USER|LOGNAME|SHELL|LANG|LANGUAGE|LC_[A-Z_]*|TERM|TZ|TMPDIR|TEMP|TMP|HOSTNAME|COLUMNS|LINES|PWD)=/;
  return readFileSync("/proc/self/environ", "utf8")
    .split("\0")
    .filter((line) => line.includes("=") && !passed.test(line) && line.length > 8);
}

describe("the file tools and the runtime's own files", () => {
  it("refuses the .env, the secret key, the database and the plugins folder inside the workspace", async () => {
    const home = homeWithDotenv();
    // The workspace is the runtime's home itself: the tools can name its files.
    rt = await startTestRuntime(fake, { home, env: { SHELL_WORKSPACE_ROOT: home, SHELL_ISOLATION: "off" } });
    symlinkSync(join(home, ".env"), join(home, "innocent.txt"));
    const key = readFileSync(join(home, "secret.key"), "utf8");
    const results = await toolCalls(
      rt,
      toolUse("read_file", { path: ".env" }),
      toolUse("read_file", { path: "secret.key" }),
      toolUse("read_file", { path: "agent.db" }),
      toolUse("read_file", { path: "innocent.txt" }),
      toolUse("write_file", { path: ".env", content: "GATEWAY_API_URL=http://attacker.example\n" }),
      toolUse("write_file", { path: "plugins/steal.mjs", content: "export default () => {}" }),
      toolUse("write_file", { path: "workspace/notes.txt", content: "fine" }),
    );
    expect(results).toHaveLength(7);
    for (const r of results.slice(0, 6)) {
      expect(r.is_error).toBe(true);
      expect(r.content).toMatch(/^Refused: .*runtime's own/);
      expect(r.content).not.toContain(DOTENV_SECRET);
      expect(r.content).not.toContain(key.trim());
    }
    expect(readFileSync(join(home, ".env"), "utf8")).toBe(`CLOUD_B_API_KEY=${DOTENV_SECRET}\n`);
    expect(existsSync(join(home, "plugins", "steal.mjs"))).toBe(false);
    expect(results[6]?.is_error).toBeFalsy();
    expect(readFileSync(join(home, "workspace", "notes.txt"), "utf8")).toBe("fine");
  });
});

describe.skipIf(!bubblewrapWorks())("local commands under bubblewrap (needs bwrap)", () => {
  it("cannot read the .env, the secret key or the runtime's process environment, nor change its folders", async () => {
    const home = homeWithDotenv();
    writeFileSync(join(home, "HEARTBEAT.md"), "- check things\n");
    rt = await startTestRuntime(fake, { home });
    const key = readFileSync(join(home, "secret.key"), "utf8").trim();
    const [result] = await toolCalls(
      rt,
      toolUse("run_command", {
        command: [
          `head -c 300 ${home}/.env ${home}/secret.key ${home}/agent.db`,
          "cat /proc/*/environ | tr '\\0' '\\n'",
          `echo 'export default () => {}' > ${home}/plugins/steal.mjs`,
          `echo GATEWAY_API_URL=http://attacker.example >> ${home}/.env`,
          `echo written > ${home}/workspace/ok.txt`,
          `echo '- and more' >> ${home}/HEARTBEAT.md`,
          "echo end",
        ].join("; "),
      }),
    );
    const out = JSON.parse(result?.content ?? "{}") as { exitCode: number; stdout: string; stderr: string };
    expect(out.stdout, out.stdout).toContain("end");
    expect(out.stdout).not.toContain(DOTENV_SECRET);
    expect(out.stdout).not.toContain(key);
    const leaked = ownStartEnvironment();
    expect(leaked.length).toBeGreaterThan(0);
    for (const line of leaked) expect(out.stdout).not.toContain(line);
    expect(existsSync(join(home, "plugins", "steal.mjs"))).toBe(false);
    expect(readFileSync(join(home, ".env"), "utf8")).toBe(`CLOUD_B_API_KEY=${DOTENV_SECRET}\n`);
    // The workspace and the heartbeat checklist stay the agent's to write.
    expect(readFileSync(join(home, "workspace", "ok.txt"), "utf8")).toBe("written\n");
    expect(readFileSync(join(home, "HEARTBEAT.md"), "utf8")).toBe("- check things\n- and more\n");
  });
});

describe.skipIf(!bubblewrapWorks())("a launcher's own files around the runtime (needs bwrap)", () => {
  it("hides the launcher's data dir from commands while the runtime's home inside it stays", async () => {
    // The all-in-one's layout: its secret key and database beside the runtime's home.
    const launcher = tempHome();
    const PLATFORM_KEY = "platform-master-key-81d2f0";
    writeFileSync(join(launcher, "secret.key"), `${PLATFORM_KEY}\n`, { mode: 0o600 });
    mkdirSync(join(launcher, "pglite"));
    writeFileSync(join(launcher, "pglite", "PG_VERSION"), "pg-data-7f3e\n");
    const home = join(launcher, "agent");
    mkdirSync(home);
    writeFileSync(join(home, "HEARTBEAT.md"), "- check\n");
    rt = await startTestRuntime(fake, { home, runtimeOptions: { hiddenPaths: [launcher] } });
    // The container's user has the data dir as its home: commands get the workspace instead.
    const savedHome = process.env.HOME;
    process.env.HOME = launcher;
    let result: Awaited<ReturnType<typeof toolCalls>>[number] | undefined;
    try {
      [result] = await toolCalls(
        rt,
        toolUse("run_command", {
          command: [
            'echo "home=$HOME"',
            "touch ~/.gitconfig",
            `cat ${launcher}/secret.key`,
            `ls -A ${launcher}`,
            `cat ${launcher}/pglite/PG_VERSION`,
            `echo x > ${launcher}/planted`,
            `cat ${home}/HEARTBEAT.md`,
            "echo made > here.txt",
            "echo end",
          ].join("; "),
        }),
      );
    } finally {
      process.env.HOME = savedHome;
    }
    const out = JSON.parse(result?.content ?? "{}") as { stdout: string };
    expect(out.stdout).toContain("end");
    expect(out.stdout).toContain(`home=${join(home, "workspace")}\n`);
    expect(existsSync(join(home, "workspace", ".gitconfig"))).toBe(true);
    expect(out.stdout).not.toContain(PLATFORM_KEY);
    expect(out.stdout).not.toContain("pg-data-7f3e");
    // Only the runtime's home shows in the launcher's folder, and its own files still read.
    expect(out.stdout).toContain("agent\n- check\n");
    expect(existsSync(join(launcher, "planted"))).toBe(false);
    expect(readFileSync(join(home, "workspace", "here.txt"), "utf8")).toBe("made\n");
  });
});

describe("SHELL_ISOLATION", () => {
  it("warns at start that commands run without bubblewrap, and not in sandbox mode", async () => {
    const captured = capturingLogger();
    rt = await startTestRuntime(fake, { env: { SHELL_ISOLATION: "off" }, logger: captured.logger });
    const warning = captured.records.find((r) => String(r.msg).startsWith("local commands run without bubblewrap"));
    expect(warning).toMatchObject({ level: 40, variable: "SHELL_ISOLATION", mode: "off" });
    await rt.close();

    const sandboxed = capturingLogger();
    rt = await startTestRuntime(fake, {
      env: {
        SHELL_ISOLATION: "bubblewrap",
        AGENTPLANE_API_URL: "http://127.0.0.1:9",
        AGENTPLANE_TOKEN: "sandbox-token",
        AGENTPLANE_PROJECT_ID: "prj_1",
        AGENTPLANE_SANDBOX_ID: "sbx_1",
      },
      logger: sandboxed.logger,
    });
    expect(sandboxed.records.some((r) => String(r.msg).includes("bubblewrap"))).toBe(false);
  });

  it("stops the start when SHELL_ISOLATION=bubblewrap cannot be had", async () => {
    const savedPath = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      await expect(startTestRuntime(fake, { env: { SHELL_ISOLATION: "bubblewrap" } })).rejects.toThrow(
        /SHELL_ISOLATION: is bubblewrap, but bwrap is not installed/,
      );
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
