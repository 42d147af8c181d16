import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RuntimeUsage } from "@agentplane/contracts/runtime";
import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureWebAssets } from "../src/web/build.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";
import { toolResultsOf } from "./support/script.ts";
import { horizontalOverflow, screenshot, seriousViolations } from "./support/web-page.ts";

const chromium = requireChromium();
const PAGES = ["chat", "profile", "webhooks", "schedules", "memory", "channels", "usage"] as const;

/** Echo by default; "use a tool" plays a two-step turn; "slow" waits long enough to be stopped. */
function respond(body: Record<string, unknown>) {
  const said = lastUserText(body);
  if (said.includes("use a tool")) {
    return toolResultsOf(body).length > 0
      ? { content: [{ type: "text" as const, text: "Here is the answer." }] }
      : {
          content: [
            { type: "text" as const, text: "Looking it up first." },
            { type: "tool_use" as const, id: `toolu_${Date.now()}`, name: "list_files", input: { path: "." } },
          ],
        };
  }
  if (said.includes("slow")) return { content: [{ type: "text" as const, text: "too late" }], delayMs: 8000 };
  return { content: [{ type: "text" as const, text: `echo: ${said.slice(0, 80)}` }] };
}

describe.skipIf(!chromium.available)(`web UI in Chromium${chromium.reason}`, () => {
  let fake: FakeModel;
  let rt: TestRuntime;
  let browser: Browser;
  let page: Page;

  const go = async (hash: string) => {
    await page.goto(`${rt.url}/#/${hash}`);
    await page.getByRole("navigation", { name: "Pages" }).waitFor();
  };
  const postWebhook = (name: string) =>
    rt.request("POST", `/agents/webhooks/${name}`, { event_type: "deploy", service: "api" });

  beforeAll(async () => {
    expect(await ensureWebAssets()).toBe(true);
    fake = await startFakeModel();
    fake.respond = respond;
    rt = await startTestRuntime(fake, { env: { HEARTBEAT_INTERVAL_MINUTES: "0", COMPACTION_TAIL_MESSAGES: "2" } });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await rt?.close();
    await fake?.close();
  });

  it("creates a subscription in the form; the receiver is off (403) until switched on, then the answer appears live with its label", async () => {
    await go("webhooks");
    await page.getByRole("button", { name: "New subscription" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Deploy Alerts!");
    await expect.poll(() => page.getByRole("alert").first().textContent()).toContain("Must match");
    await page.getByLabel("Name", { exact: true }).fill("Deploy Alerts");
    await page.getByRole("textbox", { name: "Prompt" }).fill("Deploy of {service} finished");
    await expect.poll(() => page.locator("pre.preview").textContent()).toBe("Deploy of api finished");
    await page.getByRole("textbox", { name: "Prompt" }).fill("Check the deploy");
    await expect.poll(() => page.getByRole("note").textContent()).toContain("only its text is sent");
    await page.getByRole("textbox", { name: "Prompt" }).fill("");
    await page.getByRole("button", { name: "Create subscription" }).click();
    await page.getByRole("article", { name: "Subscription deploy-alerts" }).waitFor();
    await expect.poll(() => page.getByText("/agents/webhooks/deploy-alerts").first().isVisible()).toBe(true);

    expect((await postWebhook("deploy-alerts")).status).toBe(403);
    const receiver = page.getByRole("switch", { name: "Webhook receiver" });
    expect(await receiver.getAttribute("aria-checked")).toBe("false");
    await receiver.click();
    await expect.poll(() => receiver.getAttribute("aria-checked")).toBe("true");

    await go("chat");
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    const res = await postWebhook("deploy-alerts");
    expect(res.status).toBe(202);
    const delivery = page.locator("article.delivery.webhook").filter({ hasText: "Webhook: deploy-alerts" });
    await delivery.waitFor({ timeout: 10_000 });
    expect(await delivery.locator("strong").first().textContent()).toBe("Webhook: deploy-alerts");
    expect(await delivery.textContent()).toContain('echo: Webhook event "deploy"');
  });

  it("applies the verbose rules live and after a reload", async () => {
    await go("chat");
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    const composer = page.getByRole("textbox", { name: "Message" });
    await composer.fill("please use a tool");
    await composer.press("Enter");
    await page.getByText("Here is the answer.").first().waitFor();
    expect(await page.getByText("Looking it up first.").count()).toBe(0);

    await page.getByRole("switch", { name: "Verbose" }).click();
    await expect.poll(() => page.getByRole("switch", { name: "Verbose" }).getAttribute("aria-checked")).toBe("true");
    await composer.fill("again, use a tool");
    await composer.press("Enter");
    await page.getByText("Looking it up first.").first().waitFor();
    await page.locator("details.tool summary").filter({ hasText: "Tool: list_files" }).first().waitFor();
    expect(await page.locator("details.tool").first().getAttribute("open")).toBeNull();
    await expect.poll(() => page.getByText("Here is the answer.").count()).toBe(2);

    await page.reload();
    await page.getByText("Here is the answer.").first().waitFor();
    // The second turn's first step was delivered (verbose on); the first turn's stays hidden.
    expect(await page.getByText("Looking it up first.").count()).toBe(1);
    await rt.request("PATCH", "/agents/verbose", { verbose: false });
  });

  it("model overrides set in the profile view are what the next heartbeat and scheduled run use", async () => {
    await go("profile");
    await page.getByLabel("Heartbeat model").fill("hb-model-x");
    await page.getByLabel("Cron model").fill("cron-model-y");
    await page.getByRole("button", { name: "Save models" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    expect(await page.getByText("In use: hb-model-x").count()).toBe(1);

    writeFileSync(join(rt.home, "HEARTBEAT.md"), "- check the deploys\n");
    const before = fake.requests.length;
    await rt.runtime.heartbeat.tick();
    const heartbeatModels = fake.requests.slice(before).map((r) => String(r.body.model));
    expect(heartbeatModels[0]).toBe("hb-model-x");

    await go("schedules");
    await page.getByLabel("Name").fill("nightly report");
    await page.getByLabel("Timing").selectOption("everySeconds");
    await page.getByLabel("Seconds (at least 10)").fill("5");
    await page.getByRole("textbox", { name: "Prompt" }).fill("Write the nightly report");
    await page.getByRole("button", { name: "Create schedule" }).click();
    // The API's own validation message is shown for a bad value.
    await page.getByRole("alert").first().waitFor();
    await page.getByLabel("Seconds (at least 10)").fill("3600");
    await page.getByRole("button", { name: "Create schedule" }).click();
    await page.getByRole("article", { name: "Schedule nightly report" }).waitFor();
    const beforeRun = fake.requests.length;
    await page.getByRole("button", { name: "Run nightly report now" }).click();
    const cronRequest = await waitFor(() =>
      fake.requests.slice(beforeRun).find((r) => lastUserText(r.body).includes("nightly report")),
    );
    expect(cronRequest.body.model).toBe("cron-model-y");
  });

  it("runs /compact from the composer and stops a running turn", async () => {
    await go("chat");
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    const composer = page.getByRole("textbox", { name: "Message" });
    await composer.fill("/compact the deploys");
    await composer.press("Enter");
    await page.getByText(/Compacted \d+ older messages into one summary/).waitFor();

    await composer.fill("a slow question");
    await composer.press("Enter");
    const stop = page.getByRole("button", { name: "Stop" });
    await expect.poll(() => stop.isEnabled()).toBe(true);
    const started = Date.now();
    await stop.click();
    await page.getByText("Stopped: the turn was cut short").waitFor({ timeout: 5000 });
    expect(Date.now() - started).toBeLessThan(5000);
    await expect.poll(() => stop.isEnabled()).toBe(false);
  });

  it("a subscription switched off in the UI answers 403; verification needs its secret", async () => {
    await go("webhooks");
    await page.getByRole("button", { name: "Edit deploy-alerts" }).click();
    await page.getByLabel("Verification").selectOption("github");
    await page.getByRole("button", { name: "Save subscription" }).click();
    await page.getByRole("alert").filter({ hasText: "Required for this kind of verification" }).waitFor();
    await page.getByLabel("Secret").fill("gh-secret-value");
    await page.getByRole("button", { name: "Save subscription" }).click();
    await page.getByText("github (secret set)").waitFor();
    expect((await postWebhook("deploy-alerts")).status).toBe(401);

    const active = page.getByRole("switch", { name: "Active deploy-alerts" });
    await active.click();
    await expect.poll(() => active.getAttribute("aria-checked")).toBe("false");
    expect((await postWebhook("deploy-alerts")).status).toBe(403);
    await page.getByRole("button", { name: "Delete deploy-alerts" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await expect.poll(() => page.getByRole("article", { name: "Subscription deploy-alerts" }).count()).toBe(0);
    expect((await postWebhook("deploy-alerts")).status).toBe(404);
  });

  it("shares a memory note with the team from the memory page, and takes it back", async () => {
    const memory = rt.runtime.deps.memory;
    const note = await memory.add("The release train leaves on Thursdays", "web");
    const sharedNow = () => memory.recent().find((n) => n.id === note.id)?.shared;
    await go("memory");
    const item = page.getByRole("listitem").filter({ hasText: "The release train leaves on Thursdays" });
    await item.getByText("private").waitFor();
    await item.getByRole("button", { name: /^Share with the team/ }).click();
    await item.getByText("shared with the team").waitFor();
    expect(sharedNow()).toBe(true);
    await item.getByRole("button", { name: /^Stop sharing/ }).click();
    await item.getByText("private").waitFor();
    expect(sharedNow()).toBe(false);
  });

  it("shows the chat turns' tokens and cost on the usage page, by day and by source", async () => {
    const api = await rt.json<RuntimeUsage>("GET", "/agents/usage?groupBy=source");
    const chat = api.body.groups.find((g) => g.key === "web");
    expect(chat?.modelCalls).toBeGreaterThan(0);
    await go("usage");
    const totals = page.getByRole("definition").filter({ hasText: " in · " });
    await expect.poll(() => totals.textContent()).toContain(`${api.body.total.inputTokens.toLocaleString("en-US")} in`);
    await page.getByRole("region", { name: "Usage by day" }).waitFor();
    // Keyboard only: focus the grouping and pick "Source" with the arrow keys.
    await page.getByLabel("Group by").focus();
    await page.keyboard.press("ArrowDown");
    const bySource = page.getByRole("region", { name: "Usage by source" });
    await bySource.waitFor();
    const row = bySource.getByRole("row", { name: /^Chat / });
    expect(await row.getByRole("cell").nth(3).textContent()).toBe(String(chat?.modelCalls));
  });

  it("every page: no serious axe-core violation, fits 390 px, shows the empty channels state; screenshots", async () => {
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "ci", events: "push" });
    // Nothing a page loads fails (a missing icon shows as an error in every browser's console).
    const failed: string[] = [];
    const onResponse = (res: { status(): number; url(): string }) => {
      if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
    };
    const onConsole = (msg: { type(): string; text(): string }) => {
      if (msg.type() === "error") failed.push(`console: ${msg.text()}`);
    };
    page.on("response", onResponse);
    page.on("console", onConsole);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      for (const id of PAGES) {
        await go(id);
        await page.waitForTimeout(300);
        const violations = await seriousViolations(page);
        expect(violations.map((v) => `${id}@${width}: ${v.id} ${v.help}`)).toEqual([]);
        const overflow = await horizontalOverflow(page);
        expect(overflow, `${id} at ${width}px scrolls sideways`).toBeLessThanOrEqual(0);
        await screenshot(page, `${id}-${width}`);
      }
    }
    page.off("response", onResponse);
    page.off("console", onConsole);
    expect(failed).toEqual([]);
    await go("channels");
    await expect.poll(() => page.getByText("Team chat is not configured").isVisible()).toBe(true);
    // Fourteen page loads, each with an axe-core run and a screenshot.
  }, 120_000);

  it("lists the latest threads and the older ones on request", async () => {
    for (let i = 0; i < 55; i++)
      expect((await rt.request("POST", "/agents/threads", { title: `page ${i}` })).status).toBe(201);
    const total = (await rt.json<{ items: unknown[] }>("GET", "/agents/threads?limit=200")).body.items.length;
    await go("chat");
    const threads = page.getByRole("complementary", { name: "Threads" }).getByRole("link");
    await expect.poll(() => threads.count()).toBe(50);
    await page.getByRole("button", { name: "Older threads" }).click();
    await expect.poll(() => threads.count()).toBe(total);
    expect(await page.getByRole("button", { name: "Older threads" }).count()).toBe(0);
    // The oldest, listed only on the second page, opens like any other.
    await threads.last().click();
    await page.getByRole("textbox", { name: "Message" }).waitFor();
  });

  it("says so and retries when the runtime cannot be reached", async () => {
    await page.route("**/agents/profile", (route) => route.abort("connectionrefused"));
    await go("profile");
    await page.reload();
    await page.getByText("The agent runtime cannot be reached").waitFor();
    await page.unroute("**/agents/profile");
    await page.getByRole("switch", { name: "Verbose" }).waitFor({ timeout: 5000 });
  });
});
