import { readFileSync } from "node:fs";
import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot, seriousViolations } from "./console/browser.ts";
import { startPlatform } from "./console/platform.ts";

const chromium = requireChromium();

/**
 * The admin console in Debian's Chromium against the embedded platform: one browser for the file,
 * the scenarios in order (each builds on the previous one, as a person would work).
 */
describe.skipIf(!chromium.available)(`console in a browser${chromium.reason}`, () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let orgId: string;
  let projectId: string;
  const foreignRequests: string[] = [];
  const violations: Record<string, string[]> = {};

  /** Every page passes axe-core (no serious or critical violations) and is photographed. */
  async function check(name: string) {
    await page.waitForLoadState("networkidle");
    violations[name] = await seriousViolations(page);
    await screenshot(page, name);
    expect(violations[name]?.join("\n"), name).toBe("");
  }

  beforeAll(async () => {
    platform = await startPlatform();
    const org = await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "Acme" });
    orgId = org.body.id;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on("request", (req) => {
      const url = new URL(req.url());
      if (!["http:", "ws:", "blob:", "data:"].includes(url.protocol) || url.origin !== platform.url) {
        if (url.protocol !== "blob:" && url.protocol !== "data:") foreignRequests.push(req.url());
      }
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it("sends a deep link to sign-in, signs in with an API token and returns to the page", async () => {
    await page.goto(`${platform.url}/orgs/${orgId}/projects`);
    await page.waitForURL(/\/sign-in\?next=/);
    await check("sign-in");
    await page.getByLabel("API token").fill(platform.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${platform.url}/orgs/${orgId}/projects`);
    await expect.poll(() => page.getByRole("heading", { name: "Projects" }).isVisible()).toBe(true);
    // The token is not kept by the page: only the HttpOnly cookie and the CSRF token.
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
    expect(stored).not.toContain(platform.token);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === "agentplane_session")).toMatchObject({ httpOnly: true, sameSite: "Lax" });
  });

  it("shows the organization overview with the role and what it may not do", async () => {
    await page.getByRole("link", { name: "Overview" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Acme" }).isVisible()).toBe(true);
    await expect.poll(() => page.getByText("Nothing: as owner").isVisible()).toBe(true);
    await check("org-overview");
  });

  it("creates a project", async () => {
    await page.getByRole("link", { name: "Projects" }).click();
    await page.getByRole("button", { name: "New project" }).click();
    await page.getByRole("dialog").getByLabel("Name").fill("web");
    await check("project-create");
    await page.getByRole("button", { name: "Create project" }).click();
    const row = page.getByRole("row", { name: /web/ });
    await expect.poll(() => row.isVisible()).toBe(true);
    projectId = (await row.locator("td").nth(1).textContent())!.trim();
    expect(projectId).toMatch(/^prj_/);
    await check("projects");
  });

  it("creates an API token whose secret is shown once, behind a confirmation", async () => {
    const focusedName = () => page.evaluate<string>("document.activeElement?.textContent ?? ''");
    await page.getByRole("link", { name: "API tokens" }).click();
    const open = page.getByRole("button", { name: "New API token" });
    // Escape closes the dialog and gives focus back to the button that opened it.
    await open.click();
    await page.keyboard.press("Escape");
    await expect.poll(focusedName).toBe("New API token");
    await open.click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Name").fill("ci");
    await dialog.getByLabel("Expires in").fill("forever");
    await expect.poll(() => dialog.getByText(/Use a number and a unit/).isVisible()).toBe(true);
    await dialog.getByLabel("Expires in").fill("30d");
    await dialog.getByRole("button", { name: "Create token" }).click();
    const secret = page.getByLabel("Token", { exact: true });
    await expect.poll(async () => (await secret.inputValue()).startsWith("apl_")).toBe(true);
    const value = await secret.inputValue();
    await check("token-secret");
    const done = page.getByRole("button", { name: "Done" });
    expect(await done.isDisabled()).toBe(true);
    await page.keyboard.press("Escape");
    expect(await secret.isVisible()).toBe(true);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByLabel("I have stored this token").check();
    await done.click();
    await expect.poll(() => page.getByRole("row", { name: /ci/ }).isVisible()).toBe(true);
    await expect.poll(focusedName).toBe("New API token");
    expect(await page.content()).not.toContain(value);
    // The minted token works against the API.
    const me = await fetch(`${platform.url}/v1/auth/me`, { headers: { authorization: `Bearer ${value}` } });
    expect(me.status).toBe(200);
    await check("api-tokens");
  });

  it("creates a sandbox, starts it and runs echo in the terminal", async () => {
    await page.goto(`${platform.url}/projects/${projectId}/sandboxes`);
    await page.getByRole("button", { name: "New sandbox" }).click();
    await page.getByRole("dialog").getByLabel("Name").fill("box");
    await page.getByRole("button", { name: "Create sandbox" }).click();
    await expect.poll(() => page.getByTestId("state-box").textContent(), { timeout: 30_000 }).toBe("running");
    await check("sandboxes");
    await page.getByRole("button", { name: "Terminal of box" }).click();
    await expect.poll(() => page.getByText("Connected").isVisible(), { timeout: 20_000 }).toBe(true);
    await page.getByTestId("terminal").click();
    await page.keyboard.type("echo console-$((6*7))\n");
    await expect.poll(() => page.locator(".xterm-rows").textContent(), { timeout: 15_000 }).toContain("console-42");
    await screenshot(page, "terminal");
    await page.keyboard.type("exit 3\n");
    await expect.poll(() => page.getByText("Session ended (exit 3)").isVisible(), { timeout: 15_000 }).toBe(true);
  });

  it("shows a Cedar syntax error at its line, saves the fix, binds it and shows the rule of a denied exec", async () => {
    await page.getByRole("link", { name: "Policies" }).click();
    await page.getByRole("link", { name: "New policy" }).click();
    await page.getByLabel("Policy name").fill("no exec");
    const editor = page.getByTestId("cedar-editor").locator(".cm-content");
    await editor.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type('@id("no-exec")\nforbid(principal, action == Action::"sandbox:exec" resource);');
    await page.getByRole("button", { name: "Save policy" }).click();
    const errors = page.getByRole("list", { name: "Policy errors" });
    await expect.poll(() => errors.textContent()).toMatch(/^Line 2, column \d+/);
    await check("policy-error");
    await editor.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type('@id("no-exec")\nforbid(principal, action == Action::"sandbox:exec", resource);');
    await page.getByRole("button", { name: "Save policy" }).click();
    await page.waitForURL(/\/policies\/pol_/);
    await expect.poll(() => page.getByRole("table", { name: "Policy versions" }).isVisible()).toBe(true);
    await check("policy");

    await page.getByRole("link", { name: "All policies and bindings" }).click();
    await page.getByRole("button", { name: "Bind policy" }).click();
    await expect.poll(() => page.getByRole("row", { name: /no exec.*enforce/ }).isVisible()).toBe(true);
    await check("policies");

    await page.goto(`${platform.url}/projects/${projectId}/sandboxes`);
    await page.getByRole("button", { name: "Terminal of box" }).click();
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await expect.poll(() => page.getByTestId("rule-id").textContent()).toBe("Rule: no-exec");
    await check("exec-denied");
  });

  it("browses the audit trail two pages forward and back, opens a record and exports CSV", async () => {
    // Enough records for two pages of 50: each change is recorded.
    for (let i = 0; i < 60; i++) {
      const res = await platform.api("PATCH", `/v1/orgs/${orgId}`, { name: `Acme ${i}` });
      expect(res.status).toBe(200);
    }
    await platform.api("PATCH", `/v1/orgs/${orgId}`, { name: "Acme" });
    // Records arrive through the event bus: wait until the trail holds more than one page.
    await expect
      .poll(async () => {
        const trail = await platform.api<{ items: unknown[] }>("GET", `/v1/orgs/${orgId}/audit-trail?limit=60`);
        return trail.body.items.length;
      })
      .toBeGreaterThan(55);
    await page.goto(`${platform.url}/orgs/${orgId}/audit`);
    await expect.poll(() => page.getByText("Page 1").isVisible()).toBe(true);
    // Rows show times to the second in the reader's locale, so the sixty changes look alike; the
    // Details button names its record's exact time.
    const firstRecord = () =>
      page
        .getByRole("button", { name: /^Details of/ })
        .first()
        .getAttribute("aria-label");
    const firstRow = await firstRecord();
    await check("audit");
    await page.getByRole("button", { name: "Next page" }).click();
    await expect.poll(() => page.getByText("Page 2").isVisible()).toBe(true);
    expect(page.url()).toContain("cursor=");
    await expect.poll(firstRecord).not.toBe(firstRow);
    await page.goBack();
    await expect.poll(() => page.getByText("Page 1").isVisible()).toBe(true);
    await expect.poll(firstRecord).toBe(firstRow);
    await page
      .getByRole("button", { name: /^Details of/ })
      .first()
      .click();
    await expect.poll(() => page.getByTestId("audit-json").textContent()).toContain('"action"');
    await check("audit-record");
    await page.keyboard.press("Escape");

    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export CSV" }).click();
    const file = await (await download).path();
    const lines = readFileSync(file, "utf8").trim().split("\r\n");
    expect(lines[0]).toMatch(/^time,action,outcome/);
    expect(lines.length).toBeGreaterThan(51);
  });

  it("shows a change once, with its request record folded under a disclosure the keyboard opens", async () => {
    type Record = { id: string; time: string; action: string; source: string; requestId?: string };
    // The last rename above: its domain record and the gateway's record of its request.
    let change: Record | undefined;
    let request: Record | undefined;
    await expect
      .poll(async () => {
        const trail = await platform.api<{ items: Record[] }>("GET", `/v1/orgs/${orgId}/audit-trail?limit=20`);
        change = trail.body.items.find((r) => r.action === "organization.updated");
        request = trail.body.items.find((r) => r.source === "request" && r.requestId === change?.requestId);
        return !!(change?.requestId && request);
      })
      .toBe(true);
    expect(request?.action).toBe("updateOrganization");
    await page.goto(`${platform.url}/orgs/${orgId}/audit`);
    const details = (r: Record) => page.getByRole("button", { name: `Details of ${r.action} at ${r.time}` });
    const disclosure = page.getByRole("button", { name: `+1 related of ${change!.action} at ${change!.time}` });
    await expect.poll(() => details(change!).isVisible()).toBe(true);
    // One row for the change; the request record is there, folded.
    expect(await disclosure.textContent()).toContain("+1 related");
    expect(await disclosure.getAttribute("aria-expanded")).toBe("false");
    expect(await details(request!).isVisible()).toBe(false);
    // Of the sixty-odd renames on this page, each shows once (a page may cut one request in two).
    const shown = (action: string) =>
      page.getByRole("button", { name: new RegExp(`^Details of ${action} at`) }).count();
    expect(await shown("organization\\.updated")).toBeGreaterThanOrEqual(24);
    expect(await shown("updateOrganization")).toBeLessThanOrEqual(1);

    // With the keyboard: Enter opens the group, Tab reaches the related record's Details, Space
    // closes it again.
    await disclosure.focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => disclosure.getAttribute("aria-expanded")).toBe("true");
    await expect.poll(() => details(request!).isVisible()).toBe(true);
    const related = page.getByRole("row").filter({ has: details(request!) });
    expect(await related.getByText("updateOrganization").isVisible()).toBe(true);
    await check("audit-related");
    const focused = () => page.evaluate<string>("document.activeElement?.getAttribute('aria-label') ?? ''");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe(`Details of ${change!.action} at ${change!.time}`);
    await page.keyboard.press("Tab");
    expect(await focused()).toBe(`Details of ${request!.action} at ${request!.time}`);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("audit-json").textContent()).toContain(`"id": "${request!.id}"`);
    await page.keyboard.press("Escape");
    await disclosure.focus();
    await page.keyboard.press(" ");
    await expect.poll(() => disclosure.getAttribute("aria-expanded")).toBe("false");
    expect(await details(request!).isVisible()).toBe(false);
  });

  it("lists the session and signs out, which revokes it", async () => {
    await page.getByRole("link", { name: "Sessions" }).click();
    await expect.poll(() => page.getByText("this session").isVisible()).toBe(true);
    await check("sessions");
    const cookie = (await context.cookies()).find((c) => c.name === "agentplane_session")!;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/sign-in/);
    const after = await fetch(`${platform.url}/v1/auth/me`, { headers: { cookie: `${cookie.name}=${cookie.value}` } });
    expect(after.status).toBe(401);
    await page.goto(`${platform.url}/orgs/${orgId}`);
    await page.waitForURL(/\/sign-in\?next=/);
  });

  it("the API reference links to the console and offers no vendor-cloud buttons", async () => {
    await page.goto(`${platform.url}/docs`);
    // Scalar renders the document into #app (an invalid configuration would leave it empty).
    await expect.poll(() => page.locator("#app *").count(), { timeout: 30_000 }).toBeGreaterThan(50);
    await page.waitForLoadState("networkidle");
    // The text as rendered (Playwright's innerText of the one body): hidden nodes and inline
    // scripts are not what a reader is offered.
    const text = (await page.locator("body").allInnerTexts()).join("\n");
    expect(text).not.toMatch(/Ask AI|Generate MCP|Deploy|Share/);
    await screenshot(page, "docs");
    await page.getByRole("link", { name: "Admin console" }).click();
    await page.waitForURL(/\/sign-in/);
    expect(await page.getByRole("link", { name: "API reference" }).getAttribute("href")).toBe("/docs");
  });

  it("made no request outside the installation", () => {
    expect(foreignRequests).toEqual([]);
  });
});
