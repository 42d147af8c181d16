// The device flow polls as the server says, within bounds: an interval of 0 from a broken or
// hostile server does not become a tight loop of requests.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { runInProcess, tempConfigDir } from "./harness.ts";

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
});
