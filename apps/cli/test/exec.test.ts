import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBwrap } from "../../../apps/platform/test/sandbox-harness.ts";
import { MAIN, runCli, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

const bwrap = requireBwrap();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!bwrap.available)(`sandboxes exec${bwrap.reason}`, () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;
  let sandboxId = "";
  let slug = "";
  let stoppedId = "";

  beforeAll(async () => {
    // With an ingress host, each exposed port has an address.
    p = await startTestPlatform({ env: { SANDBOX_INGRESS_HOST: "sandboxes.example.test" } });
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const org = await sdk.request("createOrganization", { body: { name: "Acme" } });
    const project = await sdk.request("createProject", { path: { orgId: org.id }, body: { name: "p" } });
    const box = await sdk.request("createSandbox", {
      path: { projectId: project.id },
      body: { name: "box", start: true },
    });
    sandboxId = box.id;
    slug = box.slug;
    stoppedId = (await sdk.request("createSandbox", { path: { projectId: project.id }, body: { name: "off" } })).id;
    env = {
      AGENTPLANE_CONFIG_DIR: config.dir,
      AGENTPLANE_URL: p.url,
      AGENTPLANE_TOKEN: p.ownerToken,
      AGENTPLANE_PROJECT: project.id,
    };
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it("exits with the remote command's exit code and keeps stdout and stderr apart", async () => {
    const ran = await runCli(
      ["sandboxes", "exec", sandboxId, "--", "sh", "-c", "echo out; echo err >&2; exit 42"],
      env,
    );
    expect(ran).toMatchObject({ code: 42, stdout: "out\n", stderr: "err\n" });
    expect((await runCli(["sandboxes", "exec", sandboxId, "--", "true"], env)).code).toBe(0);
  });

  it("lists a sandbox's ports", async () => {
    // A JSON-valued flag: the ports array parsed from the command line.
    const update = await runCli(
      ["sandboxes", "update", sandboxId, "--ports", '[{"port":8000}]', "--json", "ports"],
      env,
    );
    expect(update.stderr).toBe("");
    const ports = await runCli(["sandboxes", "ports", sandboxId], env);
    expect(ports).toMatchObject({ code: 0, stdout: `8000\tprivate\thttps://8000-${slug}.sandboxes.example.test\n` });
  });

  it("forwards 100 kB of piped stdin whole and half-closes it", async () => {
    const input = randomBytes(50_000).toString("hex");
    const ran = await runCli(["sandboxes", "exec", "-i", sandboxId, "--", "sh", "-c", "wc -c; exit 0"], env, input);
    expect(ran.code).toBe(0);
    expect(ran.stdout.trim()).toBe("100000");
    const echoed = await runCli(["sandboxes", "exec", "-i", sandboxId, "--", "cat"], env, input);
    expect(echoed.stdout).toBe(input);
  });

  it("reports a sandbox that is not running with the 409 problem's detail, exit 1", async () => {
    const ran = await runCli(["sandboxes", "exec", stoppedId, "--", "true"], env);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^error: Invalid State Transition: .*not running/);
  });

  it("asks before deleting on a terminal: no or Ctrl-C cancels with exit 2, yes deletes", async () => {
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const project = await sdk.request("getProject", { path: { projectId: env.AGENTPLANE_PROJECT! } });
    const doomed = await sdk.request("createProject", { path: { orgId: project.orgId }, body: { name: "doomed" } });
    const socket = `ap-cli-ask-${process.pid}`;
    const tmux = (...args: string[]) =>
      execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
    const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    const del = ["env", ...vars, process.execPath, MAIN, "projects", "delete", doomed.id].join(" ");
    tmux(
      "new-session",
      "-d",
      "-s",
      "t",
      "-x",
      "120",
      "-y",
      "20",
      `${del}; echo EXIT=$?; ${del}; echo EXIT=$?; ${del}; echo EXIT=$?; sleep 30`,
    );
    try {
      const waitFor = async (pattern: RegExp) => {
        for (let i = 0; i < 150; i++) {
          const text = tmux("capture-pane", "-p", "-t", "t");
          if (pattern.test(text)) return text;
          await sleep(100);
        }
        throw new Error(`waited for ${pattern}; the screen shows:\n${tmux("capture-pane", "-p", "-t", "t")}`);
      };
      await waitFor(/\[y\/N\] ?$/m);
      tmux("send-keys", "-t", "t", "n", "Enter");
      await waitFor(/^EXIT=2$/m);
      // Ctrl-C at the question is a cancellation too (exit 2), not an error.
      await waitFor(/EXIT=2[\s\S]*\[y\/N\] ?$/m);
      tmux("send-keys", "-t", "t", "C-c");
      await waitFor(/^EXIT=2[\s\S]*^EXIT=2$/m);
      await waitFor(/EXIT=2[\s\S]*EXIT=2[\s\S]*\[y\/N\] ?$/m);
      tmux("send-keys", "-t", "t", "y", "Enter");
      await waitFor(/^EXIT=0$/m);
    } finally {
      tmux("kill-server");
    }
    await expect(sdk.request("getProject", { path: { projectId: doomed.id } })).rejects.toMatchObject({ status: 404 });
  }, 90_000);

  it("under a real terminal (tmux): raw mode, resizes, Ctrl-C to the remote, the terminal restored", async () => {
    const socket = `ap-cli-test-${process.pid}`;
    const tmux = (...args: string[]) =>
      execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
    const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "t");
    const waitFor = async (pattern: RegExp, what: string) => {
      for (let i = 0; i < 150; i++) {
        const text = screen();
        if (pattern.test(text)) return text;
        await sleep(100);
      }
      throw new Error(`waited for ${what}; the screen shows:\n${screen()}`);
    };
    const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    const command = [
      "env",
      ...vars,
      process.execPath,
      MAIN,
      "sandboxes",
      "exec",
      "-i",
      "-t",
      sandboxId,
      "--",
      "sh",
    ].join(" ");
    // After exec ends: its exit code, then whether the local terminal is back in canonical mode.
    const after = `echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-*icanon' | sed 's/^/MODE=/'; sleep 30`;
    tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", `${command}; ${after}`);
    try {
      tmux("set-option", "-t", "t", "status", "off");
      await waitFor(/^[$#] ?$/m, "the remote shell's prompt");
      tmux("send-keys", "-t", "t", "stty size", "Enter");
      const [rows, cols] = tmux("display-message", "-p", "-t", "t", "#{pane_height} #{pane_width}").trim().split(" ");
      await waitFor(new RegExp(`^${rows} ${cols}$`, "m"), `stty size ${rows} ${cols}`);

      tmux("resize-window", "-t", "t", "-x", "90", "-y", "24");
      await sleep(300);
      tmux("send-keys", "-t", "t", "clear; stty size", "Enter");
      await waitFor(/^24 90$/m, "the resized terminal's size");

      // Ctrl-C interrupts the remote sleep (the remote terminal's signal), not the local CLI.
      tmux("send-keys", "-t", "t", "sleep 100; echo slept", "Enter");
      await sleep(500);
      tmux("send-keys", "-t", "t", "C-c");
      tmux("send-keys", "-t", "t", "echo still-here", "Enter");
      // The echo may be typed while the prompt is redrawn: its output can share the prompt's line.
      const interrupted = await waitFor(/^([$#] )?still-here$/m, "the shell after Ctrl-C");
      expect(interrupted).not.toMatch(/^slept$/m);

      tmux("send-keys", "-t", "t", "exit 5", "Enter");
      const end = await waitFor(/MODE=/, "the exit code and the terminal mode");
      expect(end).toMatch(/^EXIT=5$/m);
      expect(end).toMatch(/^MODE=icanon$/m);
    } finally {
      tmux("kill-server");
    }
  }, 90_000);
});
