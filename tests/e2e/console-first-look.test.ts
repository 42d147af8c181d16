import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasFocus, screenshot, seriousViolations } from "./console/browser.ts";
import { startPlatform } from "./console/platform.ts";

const chromium = requireChromium();

/** What a new user meets first: readable times, and errors that offer only what can help. */
describe.skipIf(!chromium.available)(`console first look${chromium.reason}`, () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let browser: Browser;
  let page: Page;
  let orgId: string;
  let projectId: string;

  beforeAll(async () => {
    platform = await startPlatform();
    orgId = (await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "Acme" })).body.id;
    projectId = (await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/projects`, { name: "web" })).body.id;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-US" });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${platform.url}/sign-in`);
    await page.getByLabel("API token").fill(platform.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => !url.pathname.startsWith("/sign-in"));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it("shows audit times in the reader's locale, as every other page does, not as raw ISO text", async () => {
    await expect
      .poll(async () => {
        const trail = await platform.api<{ items: unknown[] }>("GET", `/v1/orgs/${orgId}/audit-trail?limit=5`);
        return trail.body.items.length;
      })
      .toBeGreaterThan(0);
    await page.goto(`${platform.url}/orgs/${orgId}/audit`);
    const cell = page.getByRole("row").nth(1).getByRole("cell").first();
    await expect.poll(() => cell.isVisible()).toBe(true);
    const text = (await cell.textContent()) ?? "";
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
    const iso = await cell.locator("time").getAttribute("datetime");
    expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(text).toBe(new Date(iso!).toLocaleString("en-US"));
    await screenshot(page, "first-look-audit");
  });

  it("offers no Retry for an id that does not exist, and does for the API failing", async () => {
    await page.goto(`${platform.url}/projects/${projectId}/sandboxes/sbx_06h2f858jfs8mnmpf40h6ex000`);
    const alert = page.getByRole("alert");
    await expect.poll(() => alert.textContent()).toContain("was not found");
    expect(await alert.getByRole("button", { name: "Retry" }).count()).toBe(0);
    await screenshot(page, "first-look-not-found");

    // A failure on the API's side may pass: there, Retry stays.
    await page.route("**/v1/projects/*/sandboxes?*", (route) =>
      route.fulfill({
        status: 503,
        contentType: "application/problem+json",
        body: JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, detail: "Try later" }),
      }),
    );
    await page.goto(`${platform.url}/projects/${projectId}/sandboxes`);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Try later");
    expect(await page.getByRole("alert").getByRole("button", { name: "Retry" }).count()).toBe(1);
  });

  it("wraps a long unbroken project name instead of pushing the row's actions out of sight", async () => {
    const long = "x".repeat(100);
    expect((await platform.api("POST", `/v1/orgs/${orgId}/projects`, { name: long })).status).toBe(201);
    await page.goto(`${platform.url}/orgs/${orgId}/projects`);
    const row = page.getByRole("row").filter({ hasText: long });
    await expect.poll(() => row.isVisible()).toBe(true);
    // The table's scroll container: nothing to scroll sideways.
    const fits = await page
      .getByRole("table", { name: "Projects" })
      .locator("..")
      .evaluate((el) => {
        const w = el as unknown as { scrollWidth: number; clientWidth: number };
        return w.scrollWidth <= w.clientWidth;
      });
    expect(fits).toBe(true);
    const box = await row.getByRole("button", { name: "Rotate keys" }).boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(1280);
    await screenshot(page, "first-look-long-name");
  });

  it("at 768 px folds the navigation behind a Menu button, opened and closed by keyboard and by a link", async () => {
    await page.setViewportSize({ width: 768, height: 800 });
    try {
      await page.goto(`${platform.url}/orgs/${orgId}/audit`);
      const menu = page.getByRole("button", { name: "Menu" });
      const nav = page.getByRole("navigation", { name: "Console" });
      await expect.poll(() => menu.isVisible()).toBe(true);
      expect(await nav.isVisible()).toBe(false);
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      expect(await page.locator(`#${await menu.getAttribute("aria-controls")}`).getAttribute("aria-label")).toBe(
        "Console",
      );

      // The page has the window's width, and the audit rows' Details buttons are in sight.
      const main = (await page.locator("main").boundingBox())!;
      expect(main.width).toBeGreaterThan(700);
      const details = page.getByRole("button", { name: /^Details of/ }).first();
      await expect.poll(() => details.isVisible()).toBe(true);
      await screenshot(page, "first-look-audit-768");
      const box = (await details.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(768);
      expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(768);

      // Opened from the keyboard: the links take the focus; Escape closes and gives it back.
      await menu.focus();
      await page.keyboard.press("Enter");
      await expect.poll(() => nav.isVisible()).toBe(true);
      expect(await menu.getAttribute("aria-expanded")).toBe("true");
      await screenshot(page, "first-look-menu-768");
      expect(await seriousViolations(page)).toEqual([]);
      await page.keyboard.press("Escape");
      await expect.poll(() => nav.isVisible()).toBe(false);
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      expect(await hasFocus(menu)).toBe(true);

      // Choosing a link goes there and closes the menu, the focus back on its button.
      await menu.click();
      await nav.getByRole("link", { name: "Projects", exact: true }).click();
      await page.waitForURL(`${platform.url}/orgs/${orgId}/projects`);
      await expect.poll(() => nav.isVisible()).toBe(false);
      expect(await hasFocus(menu)).toBe(true);
      await expect.poll(() => page.getByRole("heading", { name: "Projects" }).isVisible()).toBe(true);
      await screenshot(page, "first-look-projects-768");
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("at 1280 px shows the navigation beside the page, with no Menu button", async () => {
    await page.goto(`${platform.url}/orgs/${orgId}/audit`);
    const nav = page.getByRole("navigation", { name: "Console" });
    await expect.poll(() => nav.isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Menu" }).count()).toBe(0);
    const navBox = (await nav.boundingBox())!;
    const mainBox = (await page.locator("main").boundingBox())!;
    expect(navBox.x + navBox.width).toBeLessThanOrEqual(mainBox.x);
    await nav.getByRole("link", { name: "Projects", exact: true }).click();
    await page.waitForURL(`${platform.url}/orgs/${orgId}/projects`);
    expect(await nav.isVisible()).toBe(true);
  });

  it("marks a table wider than its box as a focusable region that scrolls, and the page does not", async () => {
    await page.setViewportSize({ width: 520, height: 800 });
    try {
      await page.goto(`${platform.url}/orgs/${orgId}/audit`);
      const region = page.getByRole("region", { name: "Audit records, scrolls sideways" });
      await expect.poll(() => region.isVisible()).toBe(true);
      expect(await region.getAttribute("tabindex")).toBe("0");
      expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(520);
      await region.focus();
      await page.keyboard.press("ArrowRight");
      await expect
        .poll(() => region.evaluate((el) => (el as unknown as { scrollLeft: number }).scrollLeft))
        .toBeGreaterThan(0);
      await screenshot(page, "first-look-table-scrolls-520");
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
