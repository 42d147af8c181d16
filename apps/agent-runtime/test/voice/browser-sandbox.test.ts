import { execFile } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { requireChromium } from "@agentplane/testkit/browser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { probeVoice } from "../../src/voice/availability.ts";

const chromium = requireChromium();
const browserPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const asRoot = process.getuid?.() === 0;
const config = (sandbox?: string) =>
  loadConfig({
    CLOUD_A_BEARER_TOKEN: "k",
    AGENT_HOME: "/tmp/agent-voice-sandbox",
    VOICE_API_KEY: "vk",
    VOICE_BROWSER_PATH: browserPath,
    ...(sandbox ? { VOICE_BROWSER_SANDBOX: sandbox } : {}),
  });

/**
 * Run by a user other than root (Chromium refuses its sandbox to root): probes as the runtime's
 * start does, launches the meeting browser with what the probe found, opens a page and reports,
 * for each renderer process the browser started, whether seccomp confines it (`Seccomp: 2`).
 */
const PROBE = `
import { readdirSync, readFileSync } from "node:fs";
const [availabilityUrl, playwrightUrl, browserPath] = process.argv.slice(2);
const { probeVoice, browserLaunchOptions } = await import(availabilityUrl);
const playwright = await import(playwrightUrl);
const chromium = playwright.chromium ?? playwright.default.chromium;
const env = { VOICE_API_KEY: "vk", VOICE_BROWSER_PATH: browserPath, VOICE_BROWSER_SANDBOX: "auto" };
const availability = await probeVoice({ env });
const browser = await chromium.launch(browserLaunchOptions(browserPath, availability.sandboxed === true));
const page = await browser.newPage();
await page.goto("data:text/html,<p>a meeting page</p>");
const read = (pid, file) => { try { return readFileSync("/proc/" + pid + "/" + file, "utf8"); } catch { return ""; } };
const parent = new Map();
for (const pid of readdirSync("/proc").filter((p) => /^\\d+$/.test(p))) {
  const stat = read(pid, "stat");
  parent.set(pid, stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}
const descends = (pid) => { for (let p = pid; p && p !== "0"; p = parent.get(p)) if (p === String(process.pid)) return true; return false; };
const renderers = [...parent.keys()].filter((pid) => descends(pid) && read(pid, "cmdline").includes("--type=renderer"));
const seccomp = renderers.map((pid) => /Seccomp:\\s*(\\d)/.exec(read(pid, "status"))?.[1]);
const noSandboxFlag = [...parent.keys()].some((pid) => descends(pid) && read(pid, "cmdline").split("\\0").includes("--no-sandbox"));
await browser.close();
console.log(JSON.stringify({ uid: process.getuid(), availability, renderers: renderers.length, seccomp, noSandboxFlag }));
`;

describe.skipIf(!chromium.available)(`the meeting browser's sandbox${chromium.reason}`, () => {
  it.skipIf(!asRoot)("as root: auto runs it without the sandbox and says why; on turns voice off", async () => {
    expect(config().env.VOICE_BROWSER_SANDBOX).toBe("auto");
    expect(await probeVoice(config())).toEqual({
      status: "available",
      sandboxed: false,
      unsandboxedReason: expect.stringMatching(/runs as root/),
    });
    const required = await probeVoice(config("on"));
    expect(required).toMatchObject({ status: "off" });
    expect(required.status === "off" && required.reason).toMatch(
      /cannot launch with its sandbox \(VOICE_BROWSER_SANDBOX=on\)/,
    );
    expect(await probeVoice(config("off"))).toEqual({
      status: "available",
      sandboxed: false,
      unsandboxedReason: "VOICE_BROWSER_SANDBOX is off",
    });
  });

  it("refuses an unknown VOICE_BROWSER_SANDBOX at start, naming it", () => {
    expect(() => config("yes")).toThrow(/VOICE_BROWSER_SANDBOX/);
  });

  describe("as another user", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "voice-sandbox-"));
      chmodSync(dir, 0o755);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("runs it under Chromium's sandbox: no --no-sandbox, and seccomp confines its renderers", async () => {
      // The toolchain's node may sit under a directory only root can enter: the other user runs
      // a link to it (or a copy) from here.
      const node = join(dir, "node");
      try {
        linkSync(process.execPath, node);
      } catch {
        copyFileSync(process.execPath, node);
        chmodSync(node, 0o755);
      }
      const script = join(dir, "probe.mjs");
      writeFileSync(script, PROBE);
      const home = join(dir, "home");
      mkdirSync(home);
      const availabilityUrl = pathToFileURL(
        fileURLToPath(new URL("../../src/voice/availability.ts", import.meta.url)),
      ).href;
      const playwrightUrl = pathToFileURL(createRequire(import.meta.url).resolve("playwright-core")).href;
      const args = [script, availabilityUrl, playwrightUrl, browserPath];
      let command = node;
      let argv = args;
      if (asRoot) {
        chownSync(home, 65534, 65534);
        command = "setpriv";
        argv = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", node, ...args];
      }
      const { stdout } = await promisify(execFile)(command, argv, {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
        cwd: dir,
        timeout: 60_000,
      });
      const report = JSON.parse(stdout.trim().split("\n").at(-1) as string);
      expect(report.uid).not.toBe(0);
      expect(report.availability).toEqual({ status: "available", sandboxed: true });
      expect(report.noSandboxFlag).toBe(false);
      expect(report.renderers).toBeGreaterThan(0);
      expect(report.seccomp).toEqual(Array(report.renderers).fill("2"));
    });
  });
});
