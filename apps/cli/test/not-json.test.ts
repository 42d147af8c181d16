// An address that is no Agentplane installation (a web site, a proxy's or a captive portal's HTML
// page, a load balancer's text) answers 200 with text: a command fails on it, exit 1, naming the
// address, instead of printing the page and exiting 0 as if the call had been done.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { runInProcess, tempConfigDir } from "./harness.ts";

const PAGE = "<!doctype html>\n<html><body>\u001b]0;x\u0007Hotel wifi</body></html>";

describe("an address answering an HTML page", () => {
  let server: HostileServer;
  const config = tempConfigDir();
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startHostileServer((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(PAGE);
    });
    env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_TOKEN: "apl_test_secret", AGENTPLANE_URL: server.url };
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  const said = (what: string) =>
    `${what} answered text, not JSON (is ${server.url} an Agentplane installation?): "<!doctype html> <html><body>\\u001b]0;x\\u0007Hotel wifi</body></html>"`;

  it("fails a get and a create with exit 1 instead of printing the page", async () => {
    const get = await runInProcess(["orgs", "get", "org_1"], env);
    expect(get.stdout).toBe("");
    expect(get.stderr).toBe(`error: ${said("GET /v1/orgs/org_1")}\n`);
    expect(get.code).toBe(1);
    const create = await runInProcess(["orgs", "create", "--name", "acme", "--json"], env);
    expect(JSON.parse(create.stdout)).toEqual({ title: said("POST /v1/orgs") });
    expect(create.code).toBe(1);
  });

  it("says the same of a list", async () => {
    const list = await runInProcess(["orgs", "list"], env);
    expect(list.stderr).toBe(`error: ${said("GET /v1/orgs")}\n`);
    expect(list.code).toBe(1);
  });
});
