import { focused, launchChromium, requireChromium, tabUntil } from "@agentplane/testkit/browser";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureWebAssets } from "../src/web/build.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { toolResultsOf } from "./support/script.ts";
import { screenshot, wcagFindings } from "./support/web-page.ts";

const chromium = requireChromium();

/** A focus indicator is drawn, and a solid one stands out 3:1 from what is behind it. */
async function expectRing(page: Page, where: string): Promise<void> {
  const el = await focused(page);
  expect(el.ring, `focus ring on ${where}`).toBe(true);
  if (el.ringContrast !== null) expect(el.ringContrast, `focus ring contrast on ${where}`).toBeGreaterThanOrEqual(3);
}

/** Echo, or a two-step turn with a tool call for "use a tool". */
function respond(body: Record<string, unknown>) {
  const said = lastUserText(body);
  if (said.includes("use a tool") && toolResultsOf(body).length === 0) {
    return {
      content: [
        { type: "text" as const, text: "Looking it up first." },
        { type: "tool_use" as const, id: `toolu_${Date.now()}`, name: "list_files", input: { path: "." } },
      ],
    };
  }
  return { content: [{ type: "text" as const, text: `echo: ${said.slice(0, 80)}` }] };
}

/**
 * The web UI as an accessibility review sees it: every page with data in it against axe-core's
 * WCAG 2 A/AA rules (no serious or critical finding), and chat used with the keyboard alone.
 */
describe.skipIf(!chromium.available)(`web UI accessibility${chromium.reason}`, () => {
  let fake: FakeModel;
  let rt: TestRuntime;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    expect(await ensureWebAssets()).toBe(true);
    fake = await startFakeModel();
    fake.respond = respond;
    rt = await startTestRuntime(fake, {
      env: { HEARTBEAT_INTERVAL_MINUTES: "0" },
      runtimeOptions: { embedder: null },
    });
    // Data on every page: a conversation with a tool call, a webhook delivery, a schedule, notes.
    await rt.request("PATCH", "/agents/verbose", { verbose: true });
    const main = (await rt.json<{ items: { id: string; main?: boolean }[] }>("GET", "/agents/threads")).body.items[0]!;
    expect(
      (await rt.request("POST", `/agents/threads/${main.id}/messages?stream=false`, { text: "hello" })).status,
    ).toBe(200);
    const tool = await rt.request("POST", `/agents/threads/${main.id}/messages?stream=false`, { text: "use a tool" });
    expect(tool.status).toBe(200);
    await rt.request("POST", "/agents/threads", { title: "Release notes" });
    expect((await rt.request("POST", "/agents/webhook-subscriptions", { name: "ci", events: "push" })).status).toBe(
      201,
    );
    await rt.request("PUT", "/agents/webhooks/enabled", { enabled: true });
    expect((await rt.request("POST", "/agents/webhooks/ci", { event_type: "push" })).status).toBe(202);
    const schedule = await rt.json<{ id: string }>("POST", "/agents/schedules", {
      name: "nightly report",
      everySeconds: 3600,
      prompt: "Write the nightly report",
    });
    expect(schedule.status).toBe(201);
    await rt.request("POST", `/agents/schedules/${schedule.body.id}/run`);
    await rt.runtime.deps.memory.add("The staging database is restored every Sunday", "test");
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(10_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await rt?.close();
    await fake?.close();
  });

  it("every page with data, and the forms with an error, pass the WCAG 2 A/AA rules and best practices", async () => {
    const findings: { text: string; blocking: boolean }[] = [];
    const pages: [string, (p: Page) => Locator][] = [
      ["chat", (p) => p.getByText("Looking it up first.")],
      ["profile", (p) => p.getByRole("region", { name: "Model overrides" })],
      ["webhooks", (p) => p.getByRole("article", { name: "Subscription ci" })],
      ["schedules", (p) => p.getByRole("article", { name: "Schedule nightly report" })],
      ["memory", (p) => p.getByText("restored every Sunday")],
      ["channels", (p) => p.getByText("Team chat is not configured")],
      ["usage", (p) => p.getByRole("region", { name: "Usage by day" })],
    ];
    for (const [id, shows] of pages) {
      await page.goto(`${rt.url}/#/${id}`);
      await shows(page).first().waitFor();
      findings.push(...(await wcagFindings(page, id)));
    }
    // Forms showing the API's field errors.
    await page.goto(`${rt.url}/#/webhooks`);
    await page.getByRole("button", { name: "New subscription" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Bad Name!");
    await page.getByRole("alert").first().waitFor();
    findings.push(...(await wcagFindings(page, "webhooks form with an error")));
    await page.goto(`${rt.url}/#/schedules`);
    await page.getByLabel("Name").fill("too fast");
    await page.getByLabel("Timing").selectOption("everySeconds");
    await page.getByLabel("Seconds (at least 10)").fill("5");
    await page.getByRole("textbox", { name: "Prompt" }).fill("p");
    await page.getByRole("button", { name: "Create schedule" }).click();
    await page.getByRole("alert").first().waitFor();
    findings.push(...(await wcagFindings(page, "schedules form with an error")));
    expect(findings.filter((f) => f.blocking).map((f) => f.text)).toEqual([]);
  }, 60_000);

  it("sends a chat message and reaches the main panels with the keyboard alone, the focus in sight", async () => {
    await page.goto("about:blank");
    await page.goto(`${rt.url}/#/chat`);
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    // The first stop skips the navigation; the message box is a few stops into the content.
    await tabUntil(page, (el) => el.text === "Skip to content", { limit: 1 });
    await expectRing(page, "the skip link");
    await screenshot(page, "a11y-skip-link");
    await page.keyboard.press("Enter");
    expect((await focused(page)).tag).toBe("main");
    await tabUntil(page, (el) => el.label === "Message", { limit: 8 });
    await expectRing(page, "the message box");
    await page.keyboard.type("typed with keys");
    await page.keyboard.press("Enter");
    await page.getByText("echo: typed with keys").waitFor();

    // Back up to the navigation; Enter opens Schedules and puts the focus on its content.
    await tabUntil(page, (el) => el.tag === "a" && el.text === "Schedules", { back: true });
    await expectRing(page, "a navigation link");
    await page.keyboard.press("Enter");
    await page.getByRole("article", { name: "Schedule nightly report" }).waitFor();
    await expect.poll(async () => (await focused(page)).tag).toBe("main");
    expect(await page.title()).toMatch(/^Schedules/);

    // A schedule filled in from the keyboard (the timing picked with an arrow key); the API's
    // refusal is announced and tied to its field.
    await tabUntil(page, (el) => el.label === "Name");
    await expectRing(page, "the schedule form");
    await page.keyboard.type("too fast");
    await page.keyboard.press("Tab");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Control+A");
    await page.keyboard.type("5");
    await tabUntil(page, (el) => el.label === "Prompt", { limit: 2 });
    await page.keyboard.type("Check the queue");
    await tabUntil(page, (el) => el.text === "Create schedule", { limit: 3 });
    await page.keyboard.press("Enter");
    await page.getByRole("alert").first().waitFor();
    const seconds = page.getByLabel("Seconds (at least 10)");
    expect(await seconds.getAttribute("aria-invalid")).toBe("true");
    const described = await seconds.getAttribute("aria-describedby");
    expect(await page.locator(`[id="${described}"]`).textContent()).toMatch(/\S/);

    // Delete asks inline: the focus goes to Cancel, and Escape brings it back to Delete.
    await tabUntil(page, (el) => el.text === "Delete nightly report", { limit: 8 });
    await page.keyboard.press("Enter");
    expect((await focused(page)).text).toBe("Cancel");
    await expectRing(page, "the delete confirmation");
    await screenshot(page, "a11y-delete-confirmation");
    await page.keyboard.press("Escape");
    expect((await focused(page)).text).toBe("Delete nightly report");
    expect(await page.getByRole("article", { name: "Schedule nightly report" }).count()).toBe(1);

    // A subscription's Edit opens the form above the list with the focus on its first field;
    // Escape closes it and gives the focus back to Edit.
    await tabUntil(page, (el) => el.tag === "a" && el.text === "Webhooks", { back: true });
    await page.keyboard.press("Enter");
    await page.getByRole("article", { name: "Subscription ci" }).waitFor();
    await tabUntil(page, (el) => el.text === "Edit ci");
    await page.keyboard.press("Enter");
    await page.getByRole("form", { name: "Edit ci" }).waitFor();
    expect((await focused(page)).label).toBe("Description");
    await expectRing(page, "the subscription form");
    await page.keyboard.press("Escape");
    await expect.poll(() => page.getByRole("form", { name: "Edit ci" }).count()).toBe(0);
    expect((await focused(page)).text).toBe("Edit ci");
  }, 60_000);
});
