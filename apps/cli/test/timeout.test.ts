// A server that never answers does not hold the CLI forever: every request has a deadline (60 s,
// ten minutes for the pass-throughs), which --timeout or AGENTPLANE_TIMEOUT changes.
import { spawn } from "node:child_process";
import { type AddressInfo, createServer } from "node:net";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { requestTimeoutMs } from "../src/context.ts";
import { MAIN, type Ran, runCli, runInProcess, tempConfigDir } from "./harness.ts";

/** The CLI as a child that collects garbage every 50 ms; killed after 12 s if it has not ended. */
function runCliWithGc(argv: string[], env: Record<string, string>): Promise<Ran> {
  const script = `setInterval(() => globalThis.gc(), 50).unref(); await import(${JSON.stringify(pathToFileURL(MAIN).href)});`;
  return new Promise((resolve, reject) => {
    // With -e, the CLI's arguments start at argv[1]: a placeholder takes argv[1]'s usual place.
    const child = spawn(process.execPath, ["--expose-gc", "--input-type=module", "-e", script, "--", "cli", ...argv], {
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 12_000,
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

describe("a server that never answers", () => {
  let server: HostileServer;
  const config = tempConfigDir();
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startHostileServer(() => {});
    env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_TOKEN: "apl_test_secret", AGENTPLANE_URL: server.url };
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  it("ends at --timeout with a line naming the installation, exit 1", async () => {
    const started = Date.now();
    const ran = await runCli(["--timeout", "0.5", "orgs", "list"], env);
    expect(ran.stderr).toBe(
      `error: ${server.url} did not answer within 0.5 s: --timeout <seconds> waits longer (0: as long as it takes)\n`,
    );
    expect(ran.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("ends at --timeout even when garbage collections run while it waits", async () => {
    // A collection every 50 ms, as a busy process has: nothing the deadline needs may be collected.
    const started = Date.now();
    const ran = await runCliWithGc(["orgs", "get", "org_1", "--timeout", "1"], env);
    expect(ran.stderr).toBe(
      `error: ${server.url} did not answer within 1 s: --timeout <seconds> waits longer (0: as long as it takes)\n`,
    );
    expect(ran.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(8_000);
  }, 20_000);

  it("gives up completing names after 3 s, offering none, the organization's lookup included", async () => {
    for (const words of [
      ["orgs", "get", ""],
      ["sandboxes", "get", ""],
    ]) {
      const started = Date.now();
      const ran = await runCliWithGc(["__complete", ...words], env);
      expect(ran.stdout, words.join(" ")).toBe("");
      expect(ran.code).toBe(0);
      expect(Date.now() - started).toBeLessThan(8_000);
    }
  }, 30_000);

  it("takes the timeout after the command, and from AGENTPLANE_TIMEOUT", async () => {
    const after = await runInProcess(["orgs", "list", "--timeout", "0.2"], env);
    expect(after.stderr).toContain("did not answer within 0.2 s");
    const fromEnv = await runInProcess(["llm", "request", "x/v1/messages", "-f", "a=1"], {
      ...env,
      AGENTPLANE_TIMEOUT: "0.2",
    });
    expect(fromEnv.stderr).toContain("did not answer within 0.2 s");
  });

  it("with --json, puts the failure on stdout as a problem object too, as an API error is", async () => {
    const ran = await runInProcess(["orgs", "list", "--timeout", "0.2", "--json"], env);
    expect(ran.code).toBe(1);
    const title = `${server.url} did not answer within 0.2 s: --timeout <seconds> waits longer (0: as long as it takes)`;
    expect(JSON.parse(ran.stdout)).toEqual({ title });
    expect(ran.stderr).toBe(`error: ${title}\n`);
  });

  it("ends an exec whose upgrade is never answered at --timeout too", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const started = Date.now();
      const ran = await runInProcess(
        ["sandboxes", "exec", "sbx_1", "--project", "prj_1", "--timeout", "0.3", "--", "ls"],
        { ...env, AGENTPLANE_URL: url },
      );
      expect(ran.stderr).toBe(
        `error: ${url} did not answer within 0.3 s: --timeout <seconds> waits longer (0: as long as it takes)\n`,
      );
      expect(ran.code).toBe(1);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      silent.close();
    }
  });

  it("refuses a timeout that is not a number of seconds", async () => {
    const ran = await runInProcess(["orgs", "list", "--timeout", "soon"], env);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe('error: --timeout takes seconds (0 waits as long as it takes), not "soon"\n');
  });

  it("waits 60 s by default, ten minutes for a model call or a proxied API, and without limit for 0", () => {
    const io = { env: {} } as Parameters<typeof requestTimeoutMs>[0];
    expect(requestTimeoutMs(io)).toBe(60_000);
    expect(requestTimeoutMs(io, true)).toBe(600_000);
    expect(requestTimeoutMs({ ...io, timeout: "0" })).toBe(0);
  });
});
