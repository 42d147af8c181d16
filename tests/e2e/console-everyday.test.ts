import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser, Page, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasFocus, seriousViolations, signInWithToken } from "./console/browser.ts";
import { startPlatform } from "./console/platform.ts";

const chromium = requireChromium();

/**
 * What a person meets on every visit, in Chromium against the embedded platform: the tab's icon
 * on the console and on the server-rendered sign-in pages, who made each revision of a sandbox in
 * words they recognise, and project pages that open on the project they were working in.
 */
describe.skipIf(!chromium.available)(`console everyday details${chromium.reason}`, () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let browser: Browser;
  let page: Page;
  let orgId: string;
  let agentProject: string;
  let webProject: string;

  beforeAll(async () => {
    platform = await startPlatform();
    const org = await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "Acme" });
    orgId = org.body.id;
    // The agent runtime's project comes first in the organization, as it does after `npm start`.
    const agent = await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/projects`, { name: "agent" });
    const web = await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/projects`, { name: "web" });
    expect([agent.status, web.status]).toEqual([201, 201]);
    agentProject = agent.body.id;
    webProject = web.body.id;
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

  it("signs in the CLI from the address it opened: sign in, then approve the same code untyped", async () => {
    const started = await fetch(`${platform.url}/v1/auth/device`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ clientName: "agentplane CLI on build-9" }),
    });
    expect(started.status).toBe(201);
    const flow = (await started.json()) as { deviceCode: string; userCode: string; verificationUriComplete: string };
    // A browser of its own, signed out, opened at the address `agentplane auth login` hands it.
    const fresh = await browser.newContext();
    try {
      const tab = await fresh.newPage();
      tab.setDefaultTimeout(15_000);
      await tab.goto(flow.verificationUriComplete);
      expect(await tab.locator("#user-code").textContent()).toBe(flow.userCode);
      // By keyboard: the page's sign-in button, then the console's sign-in.
      const signIn = tab.getByRole("button", { name: "Sign in to decide" });
      await signIn.focus();
      await tab.keyboard.press("Enter");
      await tab.waitForURL((url) => url.pathname === "/sign-in");
      await tab.getByLabel("API token").fill(platform.token);
      await tab.getByRole("button", { name: "Sign in" }).click();
      await tab.waitForURL((url) => url.pathname === "/device");
      // Back on the page without a code in its address: the code shown before, to check and approve.
      expect(new URL(tab.url()).search).toBe("");
      await tab.getByText("agentplane CLI on build-9 asks to sign in as you.").waitFor();
      expect(await tab.locator("#user-code").textContent()).toBe(flow.userCode);
      await tab.getByText("Check that it shows the code").waitFor();
      await tab.getByRole("button", { name: "Approve" }).click();
      await tab.getByText("Approved.").waitFor();
    } finally {
      await fresh.close();
    }
    const token = await fetch(`${platform.url}/v1/auth/device/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ deviceCode: flow.deviceCode }),
    });
    expect(token.status).toBe(200);
  });

  it("names who made each revision: a member, a token by its name, and one the viewer may not read", async () => {
    const ci = await platform.api<{ id: string; token: string }>("POST", `/v1/orgs/${orgId}/api-tokens`, {
      name: "ci",
      role: "member",
    });
    expect(ci.status).toBe(201);
    const created = await fetch(`${platform.url}/v1/projects/${webProject}/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${ci.body.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "box" }),
    });
    expect(created.status).toBe(201);
    const sandboxId = ((await created.json()) as { id: string }).id;
    const changed = await platform.api("PATCH", `/v1/projects/${webProject}/sandboxes/${sandboxId}`, {
      env: { MODE: "debug" },
      reason: "debug logging",
    });
    expect(changed.status).toBe(200);
    const members = await platform.api<{ items: { role: string; displayName?: string; email?: string }[] }>(
      "GET",
      `/v1/orgs/${orgId}/members`,
    );
    const ownerMember = members.body.items.find((m) => m.role === "owner");
    const owner = ownerMember?.displayName ?? ownerMember?.email;
    expect(owner).toBeTruthy();

    await page.goto(`${platform.url}/projects/${webProject}/sandboxes/${sandboxId}`);
    const revisions = page.getByRole("table", { name: "Revisions" });
    const author = (revision: number) =>
      revisions
        .getByRole("row", { name: new RegExp(`^${revision}\\b`) })
        .getByRole("cell")
        .nth(2);
    await expect.poll(() => author(1).textContent()).toBe("ci (token)");
    await expect.poll(() => author(2).textContent()).toBe("Bootstrap token (token)");

    // Rolled back from the console with the keyboard alone: the revision is the signed-in person's.
    await page.getByRole("button", { name: "Roll back to revision 1" }).focus();
    await page.keyboard.press("Enter");
    const reason = page.getByRole("dialog").getByLabel("Reason");
    await expect.poll(() => hasFocus(reason)).toBe(true);
    await page.keyboard.type("back to quiet logs");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("dialog").count(), { timeout: 60_000 }).toBe(0);
    await expect.poll(() => author(3).textContent(), { timeout: 30_000 }).toBe(owner);
    expect(await revisions.textContent()).not.toMatch(/tok_|usr_/);
    expect((await seriousViolations(page)).join("\n")).toBe("");

    // A viewer may not read another's token, but each revision keeps its author's name as written.
    const minted = await platform.api<{ token: string }>("POST", `/v1/orgs/${orgId}/api-tokens`, {
      name: "auditor",
      role: "viewer",
    });
    const viewerContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const viewer = await viewerContext.newPage();
    viewer.setDefaultTimeout(15_000);
    try {
      await signInWithToken(viewer, platform.url, minted.body.token, `/projects/${webProject}/sandboxes/${sandboxId}`);
      const seen = viewer.getByRole("table", { name: "Revisions" });
      const cell = seen.getByRole("row", { name: /^1\b/ }).getByRole("cell").nth(2);
      await expect.poll(() => cell.textContent()).toBe("ci (token)");
      await expect
        .poll(() => seen.getByRole("row", { name: /^3\b/ }).getByRole("cell").nth(2).textContent())
        .toBe(owner);
    } finally {
      await viewerContext.close();
    }

    // A policy's versions name their authors the same way.
    const policy = await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/policies`, {
      name: "quiet",
      cedar: '@id("no-exec")\nforbid(principal, action == Action::"sandbox:exec", resource);',
    });
    expect(policy.status).toBe(201);
    await page.goto(`${platform.url}/orgs/${orgId}/policies/${policy.body.id}`);
    const versions = page.getByRole("table", { name: "Policy versions" });
    await expect
      .poll(() => versions.getByRole("row", { name: /^1\b/ }).getByRole("cell").nth(1).textContent())
      .toBe("Bootstrap token (token)");
  });

  const nav = (target: Page, name: string) =>
    target.getByRole("navigation", { name: "Console" }).getByRole("link", { name, exact: true });

  /** The project the page's picker shows, by name. */
  async function pickedProject(target: Page): Promise<string | null> {
    const picker = target.getByRole("combobox", { name: "Project" });
    await expect.poll(() => picker.inputValue()).not.toBe("");
    return picker.evaluate((el) => (el as unknown as { selectedOptions: { text: string }[] }).selectedOptions[0]!.text);
  }

  it("opens Connections and Credentials on the project last worked in, not the organization's first", async () => {
    // The organization's first project is "agent"; the last project page shown is that of "web".
    await page.goto(`${platform.url}/projects/${webProject}/sandboxes`);
    await page.getByRole("heading", { name: "Sandboxes of web" }).waitFor();
    await nav(page, "Connections").click();
    await page.waitForURL(/\/connections\?project=/);
    expect(await pickedProject(page)).toBe("web");
    expect(new URL(page.url()).searchParams.get("project")).toBe(webProject);
    await nav(page, "Credentials").click();
    await page.waitForURL(/\/credentials\?project=/);
    expect(await pickedProject(page)).toBe("web");

    // Picked on one page (with the keyboard), the project follows to the others.
    const picker = page.getByRole("combobox", { name: "Project" });
    await picker.focus();
    await picker.selectOption({ label: "agent" });
    await page.waitForURL(new RegExp(`project=${agentProject}`));
    await nav(page, "Connections").click();
    await page.waitForURL(/\/connections\?project=/);
    expect(await pickedProject(page)).toBe("agent");

    // A link naming another organization's project opens on this organization's current one.
    const other = await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "Other" });
    const foreign = await platform.api<{ id: string }>("POST", `/v1/orgs/${other.body.id}/projects`, { name: "x" });
    await page.goto(`${platform.url}/orgs/${orgId}/credentials?project=${foreign.body.id}`);
    await page.waitForURL(new RegExp(`project=${agentProject}`));
    expect(await pickedProject(page)).toBe("agent");
  });

  it("opens on the organization's first project for someone with no project worked in yet", async () => {
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const next = await fresh.newPage();
    next.setDefaultTimeout(15_000);
    try {
      await signInWithToken(next, platform.url, platform.token, `/orgs/${orgId}/connections`);
      expect(await pickedProject(next)).toBe("agent");
      // Having opened the sandboxes of "web", Credentials opens on it.
      await next.goto(`${platform.url}/projects/${webProject}/sandboxes`);
      await next.getByRole("heading", { name: "Sandboxes of web" }).waitFor();
      await nav(next, "Credentials").click();
      await next.waitForURL(/\/credentials\?project=/);
      expect(await pickedProject(next)).toBe("web");
    } finally {
      await fresh.close();
    }
  });
});
