// A token is not sent over plain http to another machine, nor handed over by a login there,
// unless AGENTPLANE_INSECURE_HTTP=1 says the network is trusted; this machine needs no opt-in.
import { afterAll, describe, expect, it } from "vitest";
import { runCli, runInProcess, tempConfigDir } from "./harness.ts";

// `.invalid` never resolves (RFC 6761): a request that is sent fails with "no such host".
const REMOTE = "http://agentplane.invalid:8443";
const REFUSED =
  "error: refusing to send a token to agentplane.invalid:8443 over plain http, where anyone on the way can read it: use https://agentplane.invalid:8443, or set AGENTPLANE_INSECURE_HTTP=1 on a network you trust\n";

describe("a token and plain http", () => {
  const config = tempConfigDir();
  const env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_TOKEN: "apl_test_secret" };
  afterAll(() => config.remove());

  it("refuses to send a token to another machine over http", async () => {
    const ran = await runInProcess(["orgs", "list", "--url", REMOTE], env);
    expect(ran.stderr).toBe(REFUSED);
    expect(ran.code).toBe(1);
    const exec = await runInProcess(
      ["sandboxes", "exec", "sbx_1", "--project", "prj_1", "--url", REMOTE, "--", "ls"],
      env,
    );
    expect(exec.stderr).toBe(REFUSED);
  });

  it("refuses a login there, pasted or by the device flow, and stores nothing", async () => {
    const pasted = await runCli(
      ["auth", "login", "--with-token", "--url", REMOTE],
      { AGENTPLANE_CONFIG_DIR: config.dir },
      "apl_x",
    );
    expect(pasted.stderr).toBe(REFUSED);
    expect(pasted.code).toBe(1);
    const device = await runInProcess(["auth", "login", "--url", REMOTE], { AGENTPLANE_CONFIG_DIR: config.dir });
    expect(device.stderr).toBe(REFUSED);
    const status = await runInProcess(["auth", "status"], { AGENTPLANE_CONFIG_DIR: config.dir });
    expect(status.code).toBe(4);
  });

  it("sends it when AGENTPLANE_INSECURE_HTTP=1 says so, and over https or to this machine without asking", async () => {
    const allowed = await runInProcess(["orgs", "list", "--url", REMOTE], { ...env, AGENTPLANE_INSECURE_HTTP: "1" });
    expect(allowed.stderr).toBe(`error: cannot reach ${REMOTE}: no such host\n`);
    const https = await runInProcess(["orgs", "list", "--url", "https://agentplane.invalid"], env);
    expect(https.stderr).toBe("error: cannot reach https://agentplane.invalid: no such host\n");
    for (const local of ["http://localhost:1", "http://127.0.0.2:1", "http://[::1]:1", "http://app.localhost:1"]) {
      const ran = await runInProcess(["orgs", "list", "--url", local], env);
      expect(ran.stderr).toMatch(/^error: cannot reach /);
    }
  });

  it("still prints a stored token with auth token, which sends nothing", async () => {
    const ran = await runInProcess(["auth", "token", "--url", REMOTE], env);
    expect(ran.stdout).toBe("apl_test_secret\n");
  });
});
