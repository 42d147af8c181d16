import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { focused, focusInDialog, launchChromium, requireChromium, tabUntil } from "@agentplane/testkit/browser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARTIFACTS, type AxeFinding, blocking, wcagFindings } from "./console/browser.ts";
import { startPlatform } from "./console/platform.ts";

const chromium = requireChromium();

/** A focus indicator is drawn, and a solid one stands out 3:1 from what is behind it. */
async function expectRing(page: Page, where: string): Promise<void> {
  const el = await focused(page);
  expect(el.ring, `focus ring on ${where}`).toBe(true);
  if (el.ringContrast !== null) expect(el.ringContrast, `focus ring contrast on ${where}`).toBeGreaterThanOrEqual(3);
}

/**
 * The console as an accessibility review sees it: every page with data in it against axe-core's
 * WCAG 2 A/AA rules (no serious or critical finding) and its best practices, in light and dark, and
 * a main flow done with the keyboard alone. One platform and one browser for the file.
 */
describe.skipIf(!chromium.available)(`console accessibility${chromium.reason}`, () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let browser: Browser;
  let page: Page;
  let orgId: string;
  let projectId: string;
  let policyId: string;
  let sandboxId: string;
  const findings: AxeFinding[] = [];

  /**
   * WCAG 2 A/AA findings that are serious or critical fail the page, in light and in dark (the
   * colours are switched in place, so a dialog stays open); so does any finding of axe's best
   * practices (landmarks, heading order, named table headers), none of which it has.
   */
  async function audit(name: string): Promise<string[]> {
    await page.waitForLoadState("networkidle");
    const light = await wcagFindings(page, `${name} (light)`);
    const practices = await wcagFindings(page, `${name} (best practice)`, ["best-practice"]);
    await page.emulateMedia({ colorScheme: "dark" });
    const dark = await wcagFindings(page, `${name} (dark)`);
    await page.emulateMedia({ colorScheme: "light" });
    findings.push(...light, ...dark, ...practices);
    return [
      ...blocking([...light, ...dark]),
      ...practices.map((f) => `${f.page}: ${f.id} (${f.impact}) ×${f.nodes} at ${f.targets}`),
    ];
  }

  beforeAll(async () => {
    platform = await startPlatform();
    const post = async (path: string, body: unknown) => {
      const res = await platform.api<{ id: string }>("POST", path, body);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(201);
      return res.body.id;
    };
    orgId = await post("/v1/orgs", { name: "Acme" });
    projectId = await post(`/v1/orgs/${orgId}/projects`, { name: "web" });
    await post(`/v1/orgs/${orgId}/projects`, { name: "data" });
    await post(`/v1/orgs/${orgId}/api-tokens`, { name: "ci", role: "viewer" });
    await post(`/v1/orgs/${orgId}/invitations`, { email: "olive@acme.test", role: "viewer" });
    await post(`/v1/orgs/${orgId}/teams`, { name: "ml-team" });
    policyId = await post(`/v1/orgs/${orgId}/policies`, {
      name: "no exec",
      cedar: '@id("no-exec")\nforbid(principal, action == Action::"sandbox:exec", resource);',
    });
    await post(`/v1/orgs/${orgId}/policy-bindings`, { policyId, mode: "dryrun" });
    await post(`/v1/orgs/${orgId}/spending-limits`, { amountUsd: 50 });
    sandboxId = await post(`/v1/projects/${projectId}/sandboxes`, { name: "box" });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    if (findings.length > 0) {
      mkdirSync(ARTIFACTS, { recursive: true });
      writeFileSync(join(ARTIFACTS, "axe-wcag.json"), JSON.stringify(findings, null, 2));
    }
    await browser?.close();
    await platform?.stop();
  });

  it("every page with data passes the WCAG 2 A/AA rules in light and dark, and the best practices", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const failures: string[] = [];
    await page.goto(`${platform.url}/sign-in`);
    await page.getByLabel("API token").waitFor();
    failures.push(...(await audit("sign-in")));
    // The dark pass sees the dark colours (the console follows prefers-color-scheme).
    const background = () =>
      page.evaluate(() => {
        const g = globalThis as unknown as {
          document: { body: unknown };
          getComputedStyle(el: unknown): { backgroundColor: string };
        };
        return g.getComputedStyle(g.document.body).backgroundColor;
      });
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await background()).toBe("rgb(2, 6, 23)");
    await page.emulateMedia({ colorScheme: "light" });
    expect(await background()).toBe("rgb(248, 250, 252)");
    // A wrong token: the error is announced.
    await page.getByLabel("API token").fill("apl_wrong");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").waitFor();
    failures.push(...(await audit("sign-in error")));
    await page.getByLabel("API token").fill(platform.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();

    const pages: [string, string, string][] = [
      ["overview", `/orgs/${orgId}`, "Acme"],
      ["projects", `/orgs/${orgId}/projects`, "Projects"],
      ["members", `/orgs/${orgId}/members`, "Members"],
      ["api-tokens", `/orgs/${orgId}/api-tokens`, "API tokens"],
      ["invitations", `/orgs/${orgId}/invitations`, "Invitations"],
      ["teams", `/orgs/${orgId}/teams`, "Teams"],
      ["audit", `/orgs/${orgId}/audit`, "Audit trail"],
      ["policies", `/orgs/${orgId}/policies`, "Policies"],
      ["policy", `/orgs/${orgId}/policies/${policyId}`, "no exec"],
      ["sandboxes", `/projects/${projectId}/sandboxes`, "Sandboxes"],
      ["sandbox", `/projects/${projectId}/sandboxes/${sandboxId}`, "box"],
      ["credentials", `/orgs/${orgId}/credentials?project=${projectId}`, "Credentials"],
      ["connections", `/orgs/${orgId}/connections?project=${projectId}`, "Connections"],
      ["decisions", `/orgs/${orgId}/decisions?project=${projectId}`, "Would this be allowed?"],
      ["drift", `/orgs/${orgId}/drift`, "Drift"],
      ["inference", `/orgs/${orgId}/inference?project=${projectId}`, "Inference"],
      ["usage", `/orgs/${orgId}/usage`, "Usage"],
      ["installation", "/installation", "Installation"],
      ["sessions", "/account/sessions", "Sessions"],
    ];
    for (const [name, path, heading] of pages) {
      await page.goto(`${platform.url}${path}`);
      await page.getByRole("heading", { level: 1, name: heading }).first().waitFor();
      failures.push(...(await audit(name)));
    }

    // Dialogs and drawers as they open.
    await page.goto(`${platform.url}/orgs/${orgId}/projects`);
    await page.getByRole("button", { name: "New project" }).click();
    await page.getByRole("dialog").waitFor();
    failures.push(...(await audit("new project dialog")));
    await page.keyboard.press("Escape");
    await page.goto(`${platform.url}/orgs/${orgId}/api-tokens`);
    await page.getByRole("button", { name: "New API token" }).click();
    await page.getByRole("dialog").getByLabel("Expires in").fill("forever");
    failures.push(...(await audit("new token dialog with an error")));
    await page.keyboard.press("Escape");
    await page.goto(`${platform.url}/orgs/${orgId}/audit`);
    await page
      .getByRole("button", { name: /^Details of/ })
      .first()
      .click();
    await page.getByRole("dialog").waitFor();
    failures.push(...(await audit("audit record")));
    await page.keyboard.press("Escape");
    // A narrow window: the navigation as a drawer over the page.
    await page.setViewportSize({ width: 768, height: 800 });
    await page.getByRole("button", { name: "Menu" }).click();
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Overview" }).waitFor();
    failures.push(...(await audit("navigation drawer at 768 px")));
    await context.close();
    expect(failures).toEqual([]);
  }, 120_000);

  it("signs in, opens a page and a dialog and closes it, with the keyboard alone and the focus in sight", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${platform.url}/sign-in`);
    await page.getByLabel("API token").waitFor();
    // Skip link or not, the token field is reached with Tab and the form is sent with Enter.
    expect(await page.title()).toBe("Sign in · Agentplane console");
    await tabUntil(page, (el) => el.label === "API token");
    await expectRing(page, "the token field");
    await page.keyboard.type(platform.token);
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Sign out" }).waitFor();

    await expect.poll(() => page.title()).toMatch(/^(?!Sign in).+ · Agentplane console$/);

    // The sign-in form went away with the focus: the page's content has it now.
    await expect.poll(async () => (await focused(page)).tag).toBe("main");

    // On a page load the skip link is the first stop and moves the focus past the header.
    await page.reload();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await tabUntil(page, (el) => el.text === "Skip to content", { limit: 1 });
    await expectRing(page, "the skip link");
    await page.keyboard.press("Enter");
    expect((await focused(page)).tag).toBe("main");

    // The navigation, reached with Shift+Tab; Enter follows the link, the page's content takes the
    // focus and the window is titled after the page.
    await tabUntil(page, (el) => el.tag === "a" && el.text === "API tokens", { back: true });
    await expectRing(page, "a navigation link");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "API tokens" }).waitFor();
    await expect.poll(async () => (await focused(page)).tag).toBe("main");
    await expect.poll(() => page.title()).toBe("API tokens · Agentplane console");

    // The page's action, then a dialog that keeps the focus inside while Tab and Shift+Tab cycle.
    await tabUntil(page, (el) => el.text === "New API token");
    await expectRing(page, "the page's button");
    await page.keyboard.press("Enter");
    await page.getByRole("dialog").waitFor();
    expect(await focusInDialog(page)).toBe(true);
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      expect(await focusInDialog(page), `Tab ${i + 1}`).toBe(true);
      await expectRing(page, `the dialog after Tab ${i + 1}`);
    }
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Shift+Tab");
      expect(await focusInDialog(page), `Shift+Tab ${i + 1}`).toBe(true);
    }
    await page.keyboard.press("Escape");
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0);
    // The dialog gives the focus back to what opened it as it unmounts, a moment after it is gone.
    await expect.poll(async () => (await focused(page)).text).toBe("New API token");

    // A token made from the keyboard: fields by Tab, the form sent with Enter. A field's error is
    // written into a live region that was there before it, so it is read out as it appears.
    await page.keyboard.press("Enter");
    await page.getByRole("dialog").waitFor();
    const expires = page.getByRole("dialog").getByLabel("Expires in");
    const note = page.locator(`[id="${await expires.getAttribute("aria-describedby")}"]`);
    expect(await note.getAttribute("aria-live")).toBe("polite");
    await expires.fill("forever");
    await expect.poll(() => note.textContent()).toMatch(/Use a number and a unit/);
    expect(await expires.getAttribute("aria-invalid")).toBe("true");
    await expires.fill("30d");
    await tabUntil(page, (el) => el.label === "Name", { limit: 10 }).catch(async () => {
      // The dialog may open with the focus already on its first field.
      expect((await focused(page)).label).toBe("Name");
    });
    await page.keyboard.type("keyboard");
    await page.keyboard.press("Enter");
    const stored = page.getByLabel("I have stored this token");
    await stored.waitFor();
    await tabUntil(page, (el) => el.label === "I have stored this token", { limit: 10 });
    await page.keyboard.press("Space");
    await tabUntil(page, (el) => el.text === "Done", { limit: 5 });
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0);
    await expect.poll(async () => (await focused(page)).text).toBe("New API token");
    await expect.poll(() => page.getByRole("row", { name: /keyboard/ }).isVisible()).toBe(true);
    await context.close();
  }, 60_000);
});
