import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureWebAssets } from "../src/web/build.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";

const chromium = requireChromium();

/**
 * A loopback runtime's page acts with no credential of its own: framed by another site's page, a
 * person could be led to click its buttons (clickjacking). Its pages say they may not be framed,
 * load only their own scripts and are not sniffed as another type.
 */
describe("the web UI's pages and other sites", () => {
  let fake: FakeModel;
  let rt: TestRuntime;
  beforeAll(async () => {
    expect(await ensureWebAssets()).toBe(true);
    fake = await startFakeModel();
    rt = await startTestRuntime(fake);
  });
  afterAll(async () => {
    await rt?.close();
    await fake?.close();
  });

  it("answers its page and assets with a policy that refuses framing and foreign scripts", async () => {
    const page = await fetch(`${rt.url}/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
    const script = /src="\.?\/?(assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${rt.url}/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("x-content-type-options")).toBe("nosniff");
  });

  describe.skipIf(!chromium.available)(`in Chromium${chromium.reason}`, () => {
    let browser: Browser;
    let attacker: Server;
    let attackerUrl: string;
    beforeAll(async () => {
      browser = await launchChromium();
      // Another origin (a different port) whose page frames the runtime's, as a hostile site would.
      attacker = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(`<!doctype html><title>prize</title><iframe name="victim" src="${rt.url}/#/chat"></iframe>`);
      });
      await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
      attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
    });
    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => attacker?.close(resolve));
    });

    it("is not shown inside another site's page, and still opens on its own", async () => {
      const page = await browser.newPage();
      await page.goto(attackerUrl);
      await page.waitForLoadState("networkidle");
      // Framed, the page would render its navigation (and its buttons) inside the other site's.
      const frame = page.frame({ name: "victim" });
      expect(frame).not.toBeNull();
      expect(await frame?.locator("nav").count()).toBe(0);
      // Its own page, opened directly, runs under the policy.
      await page.goto(`${rt.url}/#/chat`);
      await page.getByRole("navigation", { name: "Pages" }).waitFor();
      await page.close();
    });
  });
});
