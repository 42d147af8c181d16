// `api --paginate` follows nextCursor until there is none: a server that keeps handing out cursors
// would keep it asking forever. A cursor answered twice is an error, and so is a listing longer
// than --max-pages; either way nothing is printed as if it were the whole list.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, sendJson, startHostileServer } from "../../../packages/sdk/test/hostile-server.ts";
import { MAX_PAGES } from "../src/api.ts";
import { runInProcess, tempConfigDir } from "./harness.ts";

describe("api --paginate against a listing without end", () => {
  let fresh: HostileServer;
  let looping: HostileServer;
  const config = tempConfigDir();
  beforeAll(async () => {
    // Every page names a cursor never seen before.
    let n = 0;
    fresh = await startHostileServer((_req, res) => {
      n += 1;
      sendJson(res, 200, { items: [{ n }], nextCursor: `c${n}` });
    });
    // Page 1 → a, a → b, b → a again.
    looping = await startHostileServer((req, res) => {
      const cursor = new URL(req.url ?? "/", "http://x").searchParams.get("cursor");
      sendJson(res, 200, { items: [{ cursor }], nextCursor: cursor === "a" ? "b" : "a" });
    });
  });
  afterAll(async () => {
    await fresh.close();
    await looping.close();
    config.remove();
  });
  const env = (url: string) => ({ AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_URL: url, AGENTPLANE_TOKEN: "apl_t" });

  it("stops at --max-pages and says so", async () => {
    const ran = await runInProcess(["api", "GET", "/v1/orgs", "--paginate", "--max-pages", "5"], env(fresh.url));
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe("");
    expect(ran.stderr).toContain("still had more after 5 pages (--max-pages 5)");
    expect(fresh.seen.length).toBe(5);
  }, 20_000);

  it("stops at the default page cap without --max-pages", async () => {
    expect(MAX_PAGES).toBe(10_000);
    const before = fresh.seen.length;
    const ran = await runInProcess(["api", "GET", "/v1/orgs", "--paginate"], env(fresh.url));
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`still had more after ${MAX_PAGES} pages`);
    expect(fresh.seen.length - before).toBe(MAX_PAGES);
  }, 120_000);

  it("stops with an error at a cursor answered before", async () => {
    const ran = await runInProcess(["api", "GET", "/v1/orgs", "--paginate"], env(looping.url));
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe("");
    expect(ran.stderr).toContain("answered a cursor it had answered before after 3 pages");
    expect(looping.seen.length).toBe(3);
  }, 20_000);

  it("refuses a --max-pages that is not a count", async () => {
    const ran = await runInProcess(["api", "GET", "/v1/orgs", "--paginate", "--max-pages", "0"], env(fresh.url));
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("--max-pages 0");
  });
});
