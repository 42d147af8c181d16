import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ExecRequest } from "@agentplane/contracts";
import { type LocalServer, readBody, startLocalServer } from "@agentplane/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";
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

async function mainThread(r: TestRuntime): Promise<string> {
  const threads = await r.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  return threads.body.items.find((t) => t.main)?.id as string;
}

async function turn(r: TestRuntime, message: string) {
  const thread = await mainThread(r);
  return r.json<{ delivered: Array<{ text: string }>; steps: number }>(
    "POST",
    `/agents/threads/${thread}/messages?stream=false`,
    { text: message },
  );
}

/** Every tool result the model was sent during the last turn, in order. */
function resultsSince(before: number) {
  return fake.requests.slice(before).flatMap((r) => toolResultsOf(r.body));
}

describe("the tool loop with the shell tools", () => {
  it("writes, runs and lists in the workspace until the model answers", async () => {
    const workspace = join(tempHome(), "ws");
    rt = await startTestRuntime(fake, { env: { SHELL_WORKSPACE_ROOT: workspace } });
    fake.respond = scripted([
      calls(toolUse("write_file", { path: "notes/a.txt", content: "hello\n" })),
      calls(toolUse("run_command", { command: "cat notes/a.txt; echo oops >&2; exit 3" })),
      calls(toolUse("list_files", { path: "notes" }), toolUse("read_file", { path: "notes/a.txt" })),
      text("Done."),
    ]);
    const before = fake.requests.length;
    const res = await turn(rt, "make a note");
    expect(res.status).toBe(200);
    expect(res.body.delivered.map((m) => m.text)).toEqual(["Done."]);
    expect(res.body.steps).toBe(4);
    expect(readFileSync(join(workspace, "notes/a.txt"), "utf8")).toBe("hello\n");
    const results = resultsSince(before);
    expect(results).toHaveLength(4);
    expect(results.every((r) => r.is_error === false)).toBe(true);
    const exec = JSON.parse(results[1]?.content ?? "{}");
    expect(exec).toMatchObject({ exitCode: 3, stdout: "hello\n", stderr: "oops\n", timedOut: false });
    expect(JSON.parse(results[2]?.content ?? "{}").entries).toEqual([{ name: "a.txt", type: "file", size: 6 }]);
    expect(JSON.parse(results[3]?.content ?? "{}")).toMatchObject({ content: "hello\n", truncated: false });
    // The model was offered the tools.
    const offered = ((fake.requests[before]?.body.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
    expect(offered).toEqual(expect.arrayContaining(["update_settings", "run_command", "read_file", "write_file"]));
  });

  it("caps output and stops a command at its timeout", async () => {
    rt = await startTestRuntime(fake);
    fake.respond = scripted([
      calls(toolUse("run_command", { command: "head -c 200000 /dev/zero | tr '\\0' x" })),
      calls(toolUse("run_command", { command: "sleep 30", timeoutSeconds: 1 })),
      text("ok"),
    ]);
    const before = fake.requests.length;
    const started = Date.now();
    await turn(rt, "run");
    expect(Date.now() - started).toBeLessThan(10_000);
    const [big, slow] = resultsSince(before).map((r) => ({ ...r, parsed: JSON.parse(r.content) }));
    expect(big?.parsed.stdout).toHaveLength(64 * 1024);
    expect(big?.parsed.stdoutTruncated).toBe(true);
    expect(slow?.parsed.timedOut).toBe(true);
    expect(slow?.is_error).toBe(true);
  });

  it("refuses `..` and symlink escapes as tool errors kept in the run's steps", async () => {
    const home = tempHome();
    const workspace = join(home, "ws");
    mkdirSync(workspace, { recursive: true });
    const outside = join(home, "secret");
    mkdirSync(outside);
    writeFileSync(join(outside, "key.txt"), "do not read");
    symlinkSync(outside, join(workspace, "link"));
    rt = await startTestRuntime(fake, { home, env: { SHELL_WORKSPACE_ROOT: workspace } });
    fake.respond = scripted([
      calls(
        toolUse("read_file", { path: "../secret/key.txt" }),
        toolUse("read_file", { path: "link/key.txt" }),
        toolUse("write_file", { path: "link/new.txt", content: "x" }),
        toolUse("list_files", { path: "/etc" }),
      ),
      text("I cannot."),
    ]);
    const before = fake.requests.length;
    await turn(rt, "read the secret");
    const results = resultsSince(before);
    expect(results).toHaveLength(4);
    for (const r of results) {
      expect(r.is_error).toBe(true);
      expect(r.content).toMatch(/^Refused: .*outside the workspace/);
      expect(r.content).not.toContain("do not read");
    }
    const stored = await rt.runtime.deps.database.db
      .selectFrom("message")
      .select(["content", "internal", "source"])
      .where("source", "=", "tool")
      .execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]?.internal).toBe(1);
    expect(JSON.parse(stored[0]?.content ?? "[]").filter((b: { is_error: boolean }) => b.is_error)).toHaveLength(4);
  });

  it("ends a turn that keeps calling tools at the step limit with a message saying so", async () => {
    rt = await startTestRuntime(fake);
    fake.respond = () => calls(toolUse("list_files", {}));
    const res = await turn(rt, "loop forever");
    expect(res.status).toBe(200);
    expect(res.body.steps).toBe(24);
    expect(res.body.delivered.at(-1)?.text).toMatch(/limit of 24 model steps/);
  });
});

describe("shell tools in a sandbox", () => {
  let plane: LocalServer;
  const seen: Array<{ auth: string | undefined; body: ReturnType<typeof ExecRequest.parse> }> = [];
  const sandboxRoot = join(tempHome(), "sandbox-home");

  beforeAll(async () => {
    mkdirSync(sandboxRoot, { recursive: true });
    // The control plane's `POST /v1/shell/exec` (contract execShell): runs the command where the sandbox would.
    plane = await startLocalServer(async (req, res) => {
      const parsed = ExecRequest.safeParse(JSON.parse(await readBody(req)));
      if (req.url !== "/v1/shell/exec" || !parsed.success) {
        res.writeHead(400, { "content-type": "application/problem+json" });
        res.end(JSON.stringify({ title: "Bad Request", status: 400 }));
        return;
      }
      seen.push({ auth: req.headers.authorization, body: parsed.data });
      const [cmd, ...args] =
        typeof parsed.data.command === "string" ? ["/bin/sh", "-c", parsed.data.command] : parsed.data.command;
      const r = spawnSync(cmd as string, args, {
        cwd: parsed.data.cwd,
        input: parsed.data.stdin ?? "",
        encoding: "utf8",
      });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          exitCode: r.status ?? -1,
          stdout: r.stdout,
          stderr: r.stderr,
          stdoutTruncated: false,
          stderrTruncated: false,
          timedOut: false,
          durationMs: 1,
        }),
      );
    });
  });
  afterAll(() => plane.close());

  it("runs commands and file operations through /v1/shell/exec with the sandbox token", async () => {
    rt = await startTestRuntime(fake, {
      env: {
        AGENTPLANE_API_URL: plane.url,
        AGENTPLANE_TOKEN: "apl_sandbox_token",
        AGENTPLANE_PROJECT_ID: "prj_1",
        AGENTPLANE_SANDBOX_ID: "sbx_1",
        SHELL_WORKSPACE_ROOT: sandboxRoot,
      },
    });
    fake.respond = scripted([
      calls(toolUse("write_file", { path: "dir/f.txt", content: "in the sandbox" })),
      calls(toolUse("run_command", { command: "pwd; cat dir/f.txt" })),
      calls(toolUse("read_file", { path: "dir/f.txt" }), toolUse("list_files", { path: "dir" })),
      calls(toolUse("read_file", { path: "../../etc/passwd" })),
      text("done"),
    ]);
    const before = fake.requests.length;
    await turn(rt, "use the sandbox");
    const results = resultsSince(before);
    expect(readFileSync(join(sandboxRoot, "dir/f.txt"), "utf8")).toBe("in the sandbox");
    expect(JSON.parse(results[1]?.content ?? "{}")).toMatchObject({
      exitCode: 0,
      stdout: `${sandboxRoot}\nin the sandbox`,
    });
    expect(JSON.parse(results[2]?.content ?? "{}")).toMatchObject({ content: "in the sandbox", size: 14 });
    expect(JSON.parse(results[3]?.content ?? "{}").entries).toEqual([{ name: "f.txt", type: "file", size: 14 }]);
    expect(results[4]).toMatchObject({ is_error: true });
    expect(results[4]?.content).toMatch(/^Refused/);
    expect(seen.length).toBeGreaterThanOrEqual(4);
    for (const call of seen) {
      expect(call.auth).toBe("Bearer apl_sandbox_token");
      expect(call.body).toMatchObject({ projectId: "prj_1", sandboxId: "sbx_1", cwd: sandboxRoot });
    }
  });
});
