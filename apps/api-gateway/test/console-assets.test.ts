import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { consoleAssets } from "../src/console-assets.ts";

const html = { get: (name: string) => (name === "accept" ? "text/html" : null) };

describe("the console's index.html", () => {
  const dir = mkdtempSync(join(tmpdir(), "console-assets-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is the new build's after a rebuild while the gateway runs, not the old one naming deleted assets", async () => {
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.html"), '<script src="/assets/index-old.js"></script>');
    const assets = consoleAssets(dir);
    const first = await assets.serve("GET", "/orgs/x", html);
    expect(await first?.text()).toContain("index-old.js");
    // A build empties the directory and writes new names.
    writeFileSync(join(dir, "index.html"), '<script src="/assets/index-new-build.js"></script>');
    const second = await assets.serve("GET", "/orgs/x", html);
    expect(second?.status).toBe(200);
    expect(await second?.text()).toContain("index-new-build.js");
    // Gone altogether: the page says how to build it.
    rmSync(join(dir, "index.html"));
    const missing = await assets.serve("GET", "/", html);
    expect(missing?.status).toBe(503);
  });
});
