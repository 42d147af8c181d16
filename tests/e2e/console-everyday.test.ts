import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser, Page, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInWithToken } from "./console/browser.ts";
import { startPlatform } from "./console/platform.ts";

const chromium = requireChromium();

/**
 * What a person meets on every visit, in Chromium against the embedded platform: the tab's icon
 * on the console and on the server-rendered sign-in pages.
 */
describe.skipIf(!chromium.available)(`console everyday details${chromium.reason}`, () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let browser: Browser;
  let page: Page;
  let orgId: string;

  beforeAll(async () => {
    platform = await startPlatform();
    const org = await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "Acme" });
    orgId = org.body.id;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  /** The icon the browser shows for the page: its `<link rel=icon>`, else `/favicon.ico`; its width once decoded. */
  function tabIconWidth(target: Page): Promise<number> {
    return target.evaluate(async () => {
      // The tests' types have no DOM: what is used of it is declared here.
      const { document, Image } = globalThis as unknown as {
        document: { querySelector(s: string): { href: string } | null; location: { href: string } };
        Image: new () => { src: string; naturalWidth: number; decode(): Promise<void> };
      };
      const link = document.querySelector('link[rel~="icon"]');
      const href = link?.href ?? new URL("/favicon.ico", document.location.href).href;
      const img = new Image();
      img.src = href;
      await img.decode().catch(() => {});
      return img.naturalWidth;
    });
  }

  it("gives the device sign-in pages and the console a tab icon that loads", async () => {
    const missing: string[] = [];
    const onResponse = (res: Response) => {
      // The API's own answers (no session yet on the sign-in page) are not files of a page.
      if (res.status() >= 400 && !new URL(res.url()).pathname.startsWith("/v1/")) {
        missing.push(`${res.status()} ${res.url()}`);
      }
    };
    page.on("response", onResponse);
    const started = await fetch(`${platform.url}/v1/auth/device`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ clientName: "agentplane CLI on build-7" }),
    });
    expect(started.status).toBe(201);
    const flow = (await started.json()) as { verificationUriComplete: string };
    for (const url of [`${platform.url}/activate`, `${platform.url}/device`, flow.verificationUriComplete]) {
      await page.goto(url);
      expect(await tabIconWidth(page), url).toBeGreaterThan(0);
    }
    const icon = await fetch(`${platform.url}/favicon.ico`, { headers: { accept: "image/avif,image/webp,*/*" } });
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/x-icon");
    await signInWithToken(page, platform.url, platform.token, `/orgs/${orgId}`);
    expect(await tabIconWidth(page)).toBeGreaterThan(0);
    page.off("response", onResponse);
    expect(missing).toEqual([]);
  });
});
