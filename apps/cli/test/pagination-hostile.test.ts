// `--all` follows nextCursor until there is none: a server that hands back a cursor it gave
// before would keep it asking forever. The list ends at the first cursor seen twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { runInProcess, tempConfigDir } from "./harness.ts";

describe("a list whose cursors go round", () => {
  let server: HostileServer;
  const config = tempConfigDir();
  beforeAll(async () => {
    server = await startHostileServer((req, res) => {
      const cursor = new URL(req.url ?? "/", "http://x").searchParams.get("cursor");
      // Page 1 → a, a → b, b → a again.
      const next = cursor === "a" ? "b" : "a";
      sendJson(res, 200, { items: [{ id: `org_${cursor ?? "first"}`, name: "x" }], nextCursor: next });
    });
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  it("ends at a cursor it has followed before", async () => {
    const env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_URL: server.url, AGENTPLANE_TOKEN: "apl_t" };
    const ran = await runInProcess(["orgs", "list", "--all", "--json", "id", "--timeout", "5"], env);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual([{ id: "org_first" }, { id: "org_a" }, { id: "org_b" }]);
    expect(server.seen.length).toBe(3);
  }, 20_000);
});
