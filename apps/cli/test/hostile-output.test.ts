// What an installation sends is printed as text, never obeyed: escape sequences in a problem or in
// a listed name reach the terminal in caret notation (ESC as ^[), not as commands.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { runInProcess, tempConfigDir } from "./harness.ts";

// Clears the screen, sets the clipboard (OSC 52), rings the bell, and forges a line with a CR.
const HOSTILE = "x\u001b[2J\u001b]52;c;cm0gLXJmIH4=\u0007y\r\u009b31m";
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("text from a hostile installation", () => {
  let server: HostileServer;
  const config = tempConfigDir();
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startHostileServer((req, res) => {
      if (req.url?.startsWith("/v1/orgs?")) {
        return sendJson(res, 200, { items: [{ id: "org_1", name: `evil${HOSTILE}`, role: "owner" }] });
      }
      if (req.method === "DELETE") return sendJson(res, 403, { title: "Forbidden", status: 403 });
      if (req.url?.startsWith("/v1/orgs/org_lines")) {
        return sendJson(res, 400, {
          title: "Bad\nerror: forged title",
          status: 400,
          requestId: "req_1\nerror: forged id",
          errors: [{ pointer: "/body/a\nerror: forged pointer", message: "too long\r\nerror: forged message" }],
        });
      }
      sendJson(res, 400, {
        type: "https://x/problems/bad",
        title: `Bad ${HOSTILE}`,
        detail: `detail ${HOSTILE}`,
        status: 400,
        requestId: `req${HOSTILE}`,
        errors: [{ pointer: `/body/${HOSTILE}`, message: HOSTILE }],
      });
    });
    env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_TOKEN: "apl_test_secret", AGENTPLANE_URL: server.url };
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  it("shows a problem's control characters instead of sending them to the terminal", async () => {
    const ran = await runInProcess(["orgs", "get", "org_1"], env);
    expect(ran.code).toBe(1);
    expect(ran.stderr).not.toMatch(CONTROL);
    expect(ran.stderr).toContain("error: Bad x^[[2J^[]52;c;cm0gLXJmIH4=^Gy^M\\x9b31m: detail x^[[2J");
    expect(ran.stderr).toContain("  /body/x^[[2J");
    // --json prints the problem as JSON, where every control character is escaped already.
    const json = await runInProcess(["orgs", "get", "org_1", "--json"], env);
    expect(json.stdout).not.toMatch(CONTROL);
    expect(JSON.parse(json.stdout).title).toBe(`Bad ${HOSTILE}`);
  });

  it("keeps a problem's title, request id and each field error on the line the CLI gives them", async () => {
    const ran = await runInProcess(["orgs", "get", "org_lines"], env);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(
      "error: Bad error: forged title (request id req_1 error: forged id)\n" +
        "  /body/a error: forged pointer: too long error: forged message\n",
    );
  });

  it("shows control characters in a table on a terminal and in tab-separated lines", async () => {
    const tty = await runInProcess(["orgs", "list"], env, true, 200);
    expect(tty.code).toBe(0);
    expect(tty.stdout).not.toMatch(CONTROL);
    expect(tty.stdout).toContain("evilx^[[2J^[]52;c;cm0gLXJmIH4=^Gy \\x9b31m");
    const piped = await runInProcess(["orgs", "list"], env);
    expect(piped.stdout).toMatch(/^org_1\tevilx\^\[\[2J\^\[\]52;c;cm0gLXJmIH4=\^Gy \\x9b31m\towner\t/);
    expect(piped.stdout).not.toMatch(CONTROL);
  });

  it("shows control characters in --jq's raw strings on a terminal, and pipes them as they are", async () => {
    const tty = await runInProcess(["orgs", "list", "--jq", ".[].name"], env, true);
    expect(tty.code).toBe(0);
    expect(tty.stdout).not.toMatch(CONTROL);
    expect(tty.stdout).toBe("evilx^[[2J^[]52;c;cm0gLXJmIH4=^Gy^M\\x9b31m\n");
    const piped = await runInProcess(["orgs", "list", "--jq", ".[].name"], env);
    expect(piped.stdout).toBe(`evil${HOSTILE}\n`);
  });

  it("shows control characters in the token id a login was handed, when logout cannot revoke it", async () => {
    // The id came from the installation's answer to the device flow, and was stored as it was.
    const dir = join(config.dir, "logout");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const host = new URL(server.url).host;
    const hosts = { [host]: { url: server.url, token: "apl_x", tokenId: `tok${HOSTILE}`, via: "device", savedAt: "" } };
    writeFileSync(join(dir, "hosts.json"), JSON.stringify({ hosts }), { mode: 0o600 });
    const ran = await runInProcess(["auth", "logout", "--url", server.url], { AGENTPLANE_CONFIG_DIR: dir });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("but the token tokx^[[2J");
    expect(ran.stderr).not.toMatch(CONTROL);
  });
});
