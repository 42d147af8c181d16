// `auth login --with-token` on a terminal: the pasted token is read with echo off (raw mode), so
// it stays out of the screen and its scrollback, and the terminal is given back cooked.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import type { Io } from "../src/context.ts";
import { run } from "../src/run.ts";
import { stream, tempConfigDir } from "./harness.ts";

/** A terminal's stdin: what it is switched to (raw or cooked) is written down. */
function terminalStdin(): NodeJS.ReadStream & { modes: boolean[] } {
  const modes: boolean[] = [];
  const stdin = Object.assign(new PassThrough(), {
    isTTY: true,
    modes,
    setRawMode(raw: boolean) {
      modes.push(raw);
      return stdin;
    },
  });
  return stdin as unknown as NodeJS.ReadStream & { modes: boolean[] };
}

describe("a token pasted on a terminal", () => {
  let server: HostileServer;
  const config = tempConfigDir();
  beforeAll(async () => {
    server = await startHostileServer((_req, res) => sendJson(res, 200, { id: "usr_1", email: "person@example.com" }));
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  async function login(typed: string[]): Promise<{ code: number; stderr: string; modes: boolean[] }> {
    const stdin = terminalStdin();
    const stderr = Object.assign(stream(false), { isTTY: true });
    const io: Io = {
      env: { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_KEYRING: "off", NO_COLOR: "1" },
      stdin,
      stdout: stream(false),
      stderr,
    };
    const ran = run(["auth", "login", "--with-token", "--url", server.url], io);
    for (const keys of typed) {
      await new Promise((r) => setTimeout(r, 20));
      stdin.write(keys);
    }
    return { code: await ran, stderr: stderr.text(), modes: stdin.modes };
  }

  it("is read with echo off, up to Enter, Backspace taking back a character", async () => {
    const ran = await login(["apl_pasted_secret", "x\u007f", "\r"]);
    expect(ran.code).toBe(0);
    expect(ran.modes).toEqual([true, false]);
    expect(ran.stderr).toContain("Paste a token (it is not shown), then press Enter:");
    expect(ran.stderr).not.toContain("apl_pasted_secret");
    expect(server.seen.at(-1)?.authorization).toBe("Bearer apl_pasted_secret");
    expect(readFileSync(join(config.dir, "hosts.json"), "utf8")).toContain('"token": "apl_pasted_secret"');
  }, 10_000);

  it("is cancelled by Ctrl-C, the terminal given back", async () => {
    const before = server.seen.length;
    const ran = await login(["apl_half", "\u0003"]);
    expect(ran.code).toBe(2);
    expect(ran.modes).toEqual([true, false]);
    expect(server.seen.length).toBe(before);
  }, 10_000);
});
