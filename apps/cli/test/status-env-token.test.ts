// AGENTPLANE_TOKEN is a token of one installation: `auth status` checks every stored one, and
// sends each its own stored token; the variable's goes only to the installation chosen (--url,
// AGENTPLANE_URL, the current one), never to the others.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { runInProcess, tempConfigDir } from "./harness.ts";

describe("auth status with AGENTPLANE_TOKEN and several stored installations", () => {
  let a: HostileServer;
  let b: HostileServer;
  const config = tempConfigDir();
  beforeAll(async () => {
    a = await startHostileServer((_req, res) => sendJson(res, 200, { id: "usr_a", email: "a@example.com" }));
    b = await startHostileServer((_req, res) => sendJson(res, 200, { id: "usr_b", email: "b@example.com" }));
    mkdirSync(config.dir, { recursive: true, mode: 0o700 });
    const stored = (url: string, token: string) => ({ url, token, via: "token", savedAt: "" });
    const hosts = {
      [new URL(a.url).host]: stored(a.url, "apl_a_stored"),
      [new URL(b.url).host]: stored(b.url, "apl_b_stored"),
    };
    writeFileSync(join(config.dir, "hosts.json"), JSON.stringify({ hosts }), { mode: 0o600 });
    writeFileSync(join(config.dir, "config.json"), JSON.stringify({ current: a.url }), { mode: 0o600 });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    config.remove();
  });

  it("sends the variable's token to the current installation only", async () => {
    const ran = await runInProcess(["auth", "status", "--json"], {
      AGENTPLANE_CONFIG_DIR: config.dir,
      AGENTPLANE_TOKEN: "apl_env_secret_of_a",
    });
    expect(ran.code).toBe(0);
    expect(a.seen.map((s) => s.authorization)).toEqual(["Bearer apl_env_secret_of_a"]);
    expect(b.seen.map((s) => s.authorization)).toEqual(["Bearer apl_b_stored"]);
    const rows = JSON.parse(ran.stdout) as { url: string; tokenSource: string }[];
    expect(rows).toEqual([
      expect.objectContaining({ url: a.url, tokenSource: "AGENTPLANE_TOKEN" }),
      expect.objectContaining({ url: b.url, tokenSource: "store" }),
    ]);
  });
});
