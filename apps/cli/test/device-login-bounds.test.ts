// The device flow against a server that asks too much: it polls as the server says, within
// bounds (an interval of 0 does not become a tight loop of requests), and the browser it opens
// is not handed the token in the CLI's environment.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import type { Io } from "../src/context.ts";
import { run } from "../src/run.ts";
import { runInProcess, stream, tempConfigDir } from "./harness.ts";

describe("a device flow asking to be polled without pause", () => {
  let server: HostileServer;
  const config = tempConfigDir();
  beforeAll(async () => {
    server = await startHostileServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/v1/installation") return sendJson(res, 200, { status: "activated" });
      if (path === "/v1/auth/device") {
        return sendJson(res, 200, {
          deviceCode: "dev_1",
          userCode: "ABCD-EFGH",
          verificationUri: `${server.url}/device`,
          verificationUriComplete: `${server.url}/device?code=ABCD-EFGH`,
          expiresIn: 2,
          interval: 0,
        });
      }
      sendJson(res, 400, { title: "Pending", status: 400, error: "authorization_pending" });
    });
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  it("waits at least a second between polls, and gives up when the code expires", async () => {
    const ran = await runInProcess(["auth", "login", "--no-browser", "--url", server.url], {
      AGENTPLANE_CONFIG_DIR: config.dir,
    });
    expect(ran.code).toBe(4);
    expect(ran.stderr).toContain("the code expired before the sign-in was approved");
    const polls = server.seen.filter((s) => s.url === "/v1/auth/device/token");
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.length).toBeLessThanOrEqual(2);
  });

  it.skipIf(process.platform !== "linux")(
    "opens the browser without the AGENTPLANE_TOKEN of its environment",
    async () => {
      // A stand-in for xdg-open that writes down the environment it was started with.
      const seen = join(config.dir, "opener-env");
      const opener = join(config.dir, "xdg-open");
      writeFileSync(opener, `#!/bin/sh\nenv > "${seen}.tmp" && mv "${seen}.tmp" "${seen}"\n`);
      chmodSync(opener, 0o755);
      const saved = { PATH: process.env.PATH, AGENTPLANE_TOKEN: process.env.AGENTPLANE_TOKEN };
      process.env.PATH = `${config.dir}:${process.env.PATH ?? ""}`;
      process.env.AGENTPLANE_TOKEN = "apl_inherited_secret";
      try {
        // A person at a terminal: stdin and stderr are terminals, so a browser is opened.
        const stdin = Object.assign(new PassThrough(), { isTTY: true }) as unknown as NodeJS.ReadStream;
        const stderr = Object.assign(stream(false), { isTTY: true });
        const io: Io = {
          env: { AGENTPLANE_CONFIG_DIR: config.dir, NO_COLOR: "1" },
          stdin,
          stdout: stream(false),
          stderr,
        };
        expect(await run(["auth", "login", "--url", server.url], io)).toBe(4);
        for (let i = 0; i < 50 && !existsSync(seen); i++) await new Promise((r) => setTimeout(r, 100));
        const env = readFileSync(seen, "utf8");
        expect(env).toContain(`PATH=${config.dir}:`);
        expect(env).not.toContain("apl_inherited_secret");
      } finally {
        process.env.PATH = saved.PATH;
        if (saved.AGENTPLANE_TOKEN === undefined) delete process.env.AGENTPLANE_TOKEN;
        else process.env.AGENTPLANE_TOKEN = saved.AGENTPLANE_TOKEN;
      }
    },
  );
});
