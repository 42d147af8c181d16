import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPlatform } from "./console/platform.ts";

const chromium = requireChromium();

/** A script that ran would set this on the page's window: every test checks it never is. */
const MARK = "__pwned";
const PAYLOAD = `<img src=x onerror="window.${MARK}=1"><script>window.${MARK}=1</script>`;

/**
 * The console as someone who does not run it would have it behave: tenant-controlled strings and
 * addresses anyone can send are shown as text, never run and never taken as the console's words.
 */
describe.skipIf(!chromium.available)(`console against a hostile party${chromium.reason}`, () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let browser: Browser;
  let page: Page;
  let orgId: string;
  const dialogs: string[] = [];

  const injected = () => page.evaluate((mark) => mark in globalThis, MARK);

  beforeAll(async () => {
    platform = await startPlatform();
    orgId = (await platform.api<{ id: string }>("POST", "/v1/orgs", { name: `Acme ${PAYLOAD}` })).body.id;
    expect((await platform.api("POST", `/v1/orgs/${orgId}/projects`, { name: `web ${PAYLOAD}` })).status).toBe(201);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it("shows a sign-in error in its own words, never text taken from the address", async () => {
    const madeUp = "Your token has expired. Paste it at https://evil.test/verify to keep your account";
    await page.goto(`${platform.url}/sign-in?error=${encodeURIComponent(madeUp)}`);
    await page.getByRole("alert").waitFor();
    const shown = (await page.getByRole("alert").textContent()) ?? "";
    expect(shown).not.toContain("evil.test");
    expect(shown).toContain("did not succeed");
    await page.goto(`${platform.url}/sign-in?error=provider_refused`);
    await page.getByRole("alert").filter({ hasText: "The identity provider did not sign you in." }).waitFor();
    await page.goto(`${platform.url}/sign-in?error=${encodeURIComponent(PAYLOAD)}`);
    await page.getByRole("alert").waitFor();
    expect(await injected()).toBe(false);
  });

  it("renders organization and project names and audit fields as text", async () => {
    await page.goto(`${platform.url}/sign-in`);
    await page.getByLabel("API token").fill(platform.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => !url.pathname.startsWith("/sign-in"));
    // A request whose user agent is the payload, for the audit trail to show.
    await fetch(`${platform.url}/v1/orgs/${orgId}/projects`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${platform.token}`,
        "content-type": "application/json",
        "user-agent": PAYLOAD,
      },
      body: JSON.stringify({ name: "second" }),
    });
    await page.goto(`${platform.url}/orgs/${orgId}/projects`);
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await expect.poll(async () => (await page.locator("main").textContent()) ?? "").toContain(`web ${PAYLOAD}`);
    await page.goto(`${platform.url}/orgs/${orgId}/audit`);
    await page.waitForLoadState("networkidle");
    expect(await injected()).toBe(false);
    expect(dialogs).toEqual([]);
  });

  it("runs no script on the API reference but its own, and still renders it", async () => {
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const answer = await page.goto(`${platform.url}/docs`);
    expect(answer?.headers()["content-security-policy"]).toMatch(/script-src 'self' 'sha256-/);
    await expect.poll(() => page.locator("#app *").count(), { timeout: 30_000 }).toBeGreaterThan(50);
    await page.waitForLoadState("networkidle");
    expect(violations).toEqual([]);
    // A script put into the page (as a flaw in the renderer would) is refused by the policy.
    await page.addScriptTag({ content: `window.${MARK}=1` }).catch(() => undefined);
    expect(await injected()).toBe(false);
  });
  it("returns from a sign-in link to /device without the code the link carried", async () => {
    // A link anyone can send: after the sign-in, the approval page must not hold the sender's code.
    const fresh = await browser.newContext();
    try {
      const other = await fresh.newPage();
      other.setDefaultTimeout(15_000);
      await other.goto(`${platform.url}/sign-in?next=${encodeURIComponent("/device?code=BCDF-GHJK")}`);
      await other.getByLabel("API token").fill(platform.token);
      await other.getByRole("button", { name: "Sign in" }).click();
      await other.waitForURL((url) => url.pathname === "/device");
      expect(new URL(other.url()).search).toBe("");
      expect(await other.getByLabel("Code").inputValue()).toBe("");
    } finally {
      await fresh.close();
    }
  });

  it("styles the approval pages under a policy that lets nothing run or load", async () => {
    const violations: string[] = [];
    const listen = (m: { text(): string }) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    };
    page.on("console", listen);
    const answer = await page.goto(`${platform.url}/device?code=BCDF-GHJK`);
    expect(answer?.headers()["content-security-policy"]).toMatch(/default-src 'none'; style-src 'sha256-/);
    // Its one inline style sheet applies (allowed by its hash): the page is laid out as designed.
    const maxWidth = await page.evaluate(() => {
      const g = globalThis as unknown as {
        document: { body: unknown };
        getComputedStyle(el: unknown): { maxWidth: string };
      };
      return g.getComputedStyle(g.document.body).maxWidth;
    });
    expect(maxWidth).toBe("512px");
    expect(violations).toEqual([]);
    await page.addScriptTag({ content: `window.${MARK}=1` }).catch(() => undefined);
    expect(await injected()).toBe(false);
    page.off("console", listen);
  });
});
