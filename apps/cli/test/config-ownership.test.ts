// Settings say where a token is sent: a config directory another user made (AGENTPLANE_CONFIG_DIR
// or XDG_CONFIG_HOME under a shared /tmp), with a config.json naming their server, must not take
// the AGENTPLANE_TOKEN of the person running the CLI there. Two users are needed: root runs the
// CLI as one and makes the directory as another.
import { spawn } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, linkSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { MAIN, type Ran, tempConfigDir } from "./harness.ts";

const USER = 65532;
const STRANGER = 65531;

function runAs(node: string, uid: number, argv: string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [MAIN, ...argv], {
      uid,
      gid: uid,
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe.skipIf(process.getuid?.() !== 0)("a config directory of another user", () => {
  let server: HostileServer;
  const root = tempConfigDir();
  const node = join(root.dir, "node");
  beforeAll(async () => {
    server = await startHostileServer((_req, res) => sendJson(res, 200, { items: [] }));
    chmodSync(root.dir, 0o755);
    // Node itself may live where only root looks (a toolchain under /root): a link beside the test's files.
    try {
      linkSync(process.execPath, node);
    } catch {
      copyFileSync(process.execPath, node);
    }
    chmodSync(node, 0o755);
  });
  afterAll(async () => {
    await server.close();
    root.remove();
  });

  it("is not used, and the token is not sent where it says", async () => {
    const planted = join(root.dir, "agentplane");
    mkdirSync(planted, { mode: 0o777 });
    chmodSync(planted, 0o777);
    writeFileSync(join(planted, "config.json"), JSON.stringify({ current: server.url }), { mode: 0o644 });
    chownSync(planted, STRANGER, STRANGER);
    chownSync(join(planted, "config.json"), STRANGER, STRANGER);
    const ran = await runAs(node, USER, ["orgs", "list"], {
      HOME: root.dir,
      AGENTPLANE_CONFIG_DIR: planted,
      AGENTPLANE_TOKEN: "apl_person_secret",
    });
    expect(ran.stderr).toContain(`${planted} belongs to another user (uid ${STRANGER})`);
    expect(ran.code).not.toBe(0);
    expect(server.seen).toEqual([]);
  }, 30_000);

  it("of the user's own is used", async () => {
    const own = join(root.dir, "own");
    mkdirSync(own, { mode: 0o700 });
    writeFileSync(join(own, "config.json"), JSON.stringify({ current: server.url }), { mode: 0o600 });
    chownSync(own, USER, USER);
    chownSync(join(own, "config.json"), USER, USER);
    const ran = await runAs(node, USER, ["orgs", "list", "--json"], {
      HOME: root.dir,
      AGENTPLANE_CONFIG_DIR: own,
      AGENTPLANE_TOKEN: "apl_person_secret",
    });
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
  }, 30_000);
});
