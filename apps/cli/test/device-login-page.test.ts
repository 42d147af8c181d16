// The sign-in page an installation names in a device flow is checked before it is shown or
// opened: an address that is no web page is refused, and one on another origin than the
// installation's (a relay passing on another installation's code) is shown with a warning and
// never opened in a browser for the person.
import { chmodSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import type { Io } from "../src/context.ts";
import { run } from "../src/run.ts";
import { stream, tempConfigDir } from "./harness.ts";

describe.skipIf(process.platform !== "linux")("the sign-in page of a device flow", () => {
  let server: HostileServer;
  let page = { verificationUri: "", verificationUriComplete: "" };
  const config = tempConfigDir();
  const opened = join(config.dir, "opened");
  beforeAll(async () => {
    server = await startHostileServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/v1/installation") return sendJson(res, 200, { status: "activated" });
      if (path === "/v1/auth/device") {
        return sendJson(res, 200, { deviceCode: "dev_1", userCode: "ABCD-EFGH", expiresIn: 1, interval: 1, ...page });
      }
      sendJson(res, 400, { title: "Pending", status: 400, error: "authorization_pending" });
    });
    // A stand-in for xdg-open that writes down what it was asked to open.
    const opener = join(config.dir, "xdg-open");
    writeFileSync(opener, `#!/bin/sh\nprintf '%s' "$1" > "${opened}.tmp" && mv "${opened}.tmp" "${opened}"\n`);
    chmodSync(opener, 0o755);
  });
  beforeEach(() => {
    rmSync(opened, { force: true });
    server.seen.length = 0;
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  /** `auth login` as a person at a terminal would run it: a browser may be opened. */
  async function login(): Promise<{ code: number; stderr: string; opened: boolean }> {
    const path = process.env.PATH;
    process.env.PATH = `${config.dir}:${path ?? ""}`;
    try {
      const stdin = Object.assign(new PassThrough(), { isTTY: true }) as unknown as NodeJS.ReadStream;
      const stderr = Object.assign(stream(false), { isTTY: true });
      const io: Io = {
        env: { AGENTPLANE_CONFIG_DIR: config.dir, NO_COLOR: "1" },
        stdin,
        stdout: stream(false),
        stderr,
      };
      const code = await run(["auth", "login", "--url", server.url], io);
      // The opener runs detached: give it time to write down what it got.
      for (let i = 0; i < 20 && !existsSync(opened); i++) await new Promise((r) => setTimeout(r, 100));
      return { code, stderr: stderr.text(), opened: existsSync(opened) };
    } finally {
      process.env.PATH = path;
    }
  }

  it("opens the installation's own page", async () => {
    page = {
      verificationUri: `${server.url}/device`,
      verificationUriComplete: `${server.url}/device?code=ABCD-EFGH`,
    };
    const ran = await login();
    expect(ran.stderr).toContain(`Then open ${server.url}/device `);
    expect(ran.stderr).not.toContain("is not 127.0.0.1");
    expect(ran.opened).toBe(true);
  });

  it("refuses an address that is not a web page, and opens nothing", async () => {
    page = { verificationUri: "file:///etc/passwd", verificationUriComplete: "file:///etc/passwd" };
    const ran = await login();
    expect(ran.code).toBe(4);
    expect(ran.stderr).toContain('the installation sent "file:///etc/passwd" as its sign-in page');
    expect(ran.stderr).not.toContain("one-time code");
    expect(ran.opened).toBe(false);
    expect(server.seen.some((s) => s.url === "/v1/auth/device/token")).toBe(false);
  });

  it("warns of a page on another origin and does not open it", async () => {
    page = {
      verificationUri: "https://agentplane.example.com/device",
      verificationUriComplete: "https://agentplane.example.com/device?code=ABCD-EFGH",
    };
    const ran = await login();
    expect(ran.stderr).toContain("Then open https://agentplane.example.com/device ");
    expect(ran.stderr).toContain(
      `! agentplane.example.com is not ${new URL(server.url).host}, the installation logged in to`,
    );
    expect(ran.opened).toBe(false);
  });
});
