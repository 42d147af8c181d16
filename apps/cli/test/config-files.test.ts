// A settings or credentials file that is not what the CLI wrote (cut short by a full disk, edited
// by hand, `null`) is reported as one line naming the file, exit 1, as every other failure is:
// never a stack trace, and with --json an object on stdout too.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempConfigDir } from "./harness.ts";

describe("a config directory holding files the CLI cannot read", () => {
  const root = tempConfigDir();
  afterAll(() => root.remove());
  let n = 0;

  /** A config directory of its own with `name` holding `text`. */
  function configWith(name: string, text: string): { dir: string; file: string } {
    const dir = join(root.dir, String(n++));
    mkdirSync(dir, { mode: 0o700 });
    const file = join(dir, name);
    writeFileSync(file, text, { mode: 0o600 });
    return { dir, file };
  }

  const env = (dir: string) => ({ AGENTPLANE_CONFIG_DIR: dir, AGENTPLANE_URL: "http://127.0.0.1:9" });

  it("says a hosts.json cut short is not valid JSON, in one line, exit 1", async () => {
    const { dir, file } = configWith("hosts.json", '{"hosts": {"127.0.0.1:9": {"tok');
    const ran = await runCli(["orgs", "list"], env(dir));
    expect(ran.stderr).toBe(`error: ${file} is not valid JSON: fix or remove it\n`);
    expect(ran.code).toBe(1);
    const json = await runCli(["orgs", "list", "--json"], env(dir));
    expect(JSON.parse(json.stdout)).toEqual({ title: `${file} is not valid JSON: fix or remove it` });
    expect(json.code).toBe(1);
  });

  it("says so of JSON that is no object (null, a list) instead of a TypeError", async () => {
    for (const [name, text] of [
      ["hosts.json", "null\n"],
      ["config.json", "null\n"],
      ["config.json", "[1]\n"],
      ["hosts.json", '{"hosts": "x"}\n'],
      ["hosts.json", '{"hosts": {"127.0.0.1:9": {"token": "apl_x"}}}\n'],
    ] as const) {
      const { dir, file } = configWith(name, text);
      const ran = await runCli(name === "config.json" ? ["config", "list"] : ["orgs", "list"], env(dir));
      expect(ran.stderr, `${name}: ${text}`).toBe(`error: ${file} is not what agentplane writes: fix or remove it\n`);
      expect(ran.code).toBe(1);
    }
  });

  it("still answers auth status and config list with one line, not a stack trace", async () => {
    const { dir, file } = configWith("hosts.json", "{");
    for (const argv of [
      ["auth", "status"],
      ["config", "list"],
      ["auth", "logout"],
    ]) {
      const ran = await runCli(argv, env(dir));
      expect(ran.stderr, argv.join(" ")).toBe(`error: ${file} is not valid JSON: fix or remove it\n`);
      expect(ran.code).toBe(1);
    }
  });
});
