import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { SlackStandIn } from "@agentplane/testkit/slack";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pairingCode } from "../src/chat/store.ts";
import { ensureWebAssets } from "../src/web/build.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { waitFor } from "./support/runtime.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";
import { horizontalOverflow, screenshot, seriousViolations } from "./support/web-page.ts";

const chromium = requireChromium();
const OWNER = "U0OWNER";

interface Channel {
  id: string;
  name: string | null;
  main: boolean;
}

describe.skipIf(!chromium.available)(`web UI channels view against the Slack stand-in${chromium.reason}`, () => {
  let fake: FakeModel;
  let standIn: SlackStandIn;
  let rt: SlackTestRuntime;
  let browser: Browser;
  let page: Page;

  const channels = async () =>
    (await rt.json<{ data: Channel[] }>("GET", "/agents/team-chat/channels")).body.data.map((c) => [c.id, c.main]);
  /** Loads the page afresh (a hash-only navigation would keep the loaded lists). */
  const open = async () => {
    await page.goto("about:blank");
    await page.goto(`${rt.url}/#/channels`);
    await page.getByRole("heading", { name: "Team chat" }).waitFor();
  };
  /** The row of a linked channel in the list. */
  const row = (name: string) => page.locator("ul.notes > li").filter({ hasText: `#${name} linked` });
  const facts = async () => (await page.locator("dl.facts").textContent()) ?? "";

  beforeAll(async () => {
    expect(await ensureWebAssets()).toBe(true);
    fake = await startFakeModel();
    standIn = await freshStandIn(fake, { [OWNER]: "olivia" });
    standIn.workspace.addChannel("C0OPS", "ops", [OWNER]);
    standIn.workspace.addChannel("C0DEV", "dev", [OWNER]);
    rt = await startSlackRuntime(fake, standIn, { env: { CHAT_MODE: "team" } });
    expect(await settled(rt)).toMatchObject({ state: "connected" });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await rt?.close();
    await standIn?.close();
    await fake?.close();
  });

  it("shows the connection, links channels (invite and by id), flags the main one that deliveries then use, unlinks", async () => {
    await open();
    await waitFor(async () => ((await facts()).includes("connected") ? true : undefined));
    expect(await facts()).toContain("Team: deliveries go to the main channel");
    await page.getByText("No channel is linked yet").waitFor();

    // Inviting the bot in Slack links the channel; the view lists it with the name Slack gave.
    standIn.inviteBot("C0OPS", OWNER);
    await waitFor(async () => ((await channels()).length === 1 ? true : undefined));
    await open();
    await row("ops").waitFor();

    // Linking by id from the view: the form mirrors the API's rule, and the API looks the name up.
    const input = page.getByLabel("Link a channel by id");
    await input.fill("not a channel!");
    await page.getByRole("button", { name: "Link", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "A chat channel id such as C0123ABCD" }).waitFor();
    expect(await channels()).toHaveLength(1);
    await input.fill("c0dev");
    await page.getByRole("button", { name: "Link", exact: true }).click();
    await row("dev").waitFor();
    expect(await channels()).toEqual([
      ["C0OPS", false],
      ["C0DEV", false],
    ]);
    expect(standIn.api.callsOf("conversations.info").map((c) => c.params.channel)).toContain("C0DEV");

    // The newer channel flagged main: a Team chat delivery goes there, not to the oldest.
    await page.getByRole("switch", { name: "Main channel dev" }).click();
    await waitFor(async () =>
      JSON.stringify(await channels()) === '[["C0OPS",false],["C0DEV",true]]' ? true : undefined,
    );
    await page.locator('[role="switch"][aria-label="Main channel dev"][aria-checked="true"]').waitFor();
    expect(await page.getByRole("switch", { name: "Main channel ops" }).getAttribute("aria-checked")).toBe("false");
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "alerts",
      deliverOnly: true,
      deliverTo: "Team chat",
      prompt: "disk full",
    });
    expect((await rt.request("POST", "/agents/webhooks/alerts", {})).status).toBe(200);
    await waitFor(() => (answers(standIn, "C0DEV").length === 1 ? true : undefined));
    expect(answers(standIn, "C0DEV")[0]?.text).toBe("**Webhook: alerts**\n\ndisk full");
    expect(answers(standIn, "C0OPS")).toHaveLength(0);

    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "channels-team");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, "channels-team-390");
    await page.setViewportSize({ width: 1280, height: 900 });

    // Unlinking asks once more, then the channel is gone from the view and the API.
    await page.getByRole("button", { name: "Delete link to #ops" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await waitFor(async () => ((await channels()).length === 1 ? true : undefined));
    await row("ops").waitFor({ state: "detached" });
    expect(await channels()).toEqual([["C0DEV", true]]);
  });

  it("shows the pairing, the paired owner, and resets it", async () => {
    await open();
    await waitFor(async () => ((await facts()).includes("waiting for the pairing code") ? true : undefined));
    const code = await pairingCode(rt.runtime.deps.database.db);
    expect(code).toBeTruthy();
    standIn.say(OWNER, code as string);
    await waitFor(() => (answers(standIn, standIn.workspace.dm(OWNER).id).length === 1 ? true : undefined));
    await open();
    await waitFor(async () => ((await facts()).includes(`${OWNER} (paired)`) ? true : undefined));

    await page.getByRole("button", { name: "Reset owner" }).click();
    await page.getByRole("button", { name: "Yes, forget the owner" }).click();
    await waitFor(async () => ((await facts()).includes("waiting for the pairing code") ? true : undefined));
    const state = await rt.json<{ owner: { id: string | null; pairingPending: boolean } }>("GET", "/agents/team-chat");
    expect(state.body.owner).toMatchObject({ id: null, pairingPending: true });
    // A new code: the old one no longer pairs.
    expect(await pairingCode(rt.runtime.deps.database.db)).not.toBe(code);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("says why team chat is disabled when the app id does not match, and the runtime keeps serving", async () => {
    await rt.close();
    rt = await startSlackRuntime(fake, standIn, {
      home: rt.home,
      env: { CHAT_MODE: "team", CHAT_EXPECTED_APP_ID: "A0SOMEONEELSE" },
    });
    expect(await settled(rt)).toMatchObject({ state: "disabled" });
    await open();
    await waitFor(async () => ((await facts()).includes("disabled: app id mismatch") ? true : undefined));
    await screenshot(page, "channels-disabled");
  });
});
