import type { Sandbox } from "@agentplane/contracts";
import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasFocus, screenshot, seriousViolations, signInWithToken } from "./console/browser.ts";
import { startPlatform } from "./console/platform.ts";

const chromium = requireChromium();

/**
 * The sandbox detail view in Chromium against the embedded platform: revisions and rollback,
 * exposed ports, the effective policy and the open shell sessions of one sandbox, and the warning
 * for limits that do not hold on this host.
 */
describe.skipIf(!chromium.available)(`console sandbox detail${chromium.reason}`, () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let browser: Browser;
  let page: Page;
  let orgId: string;
  let projectId: string;
  let sandboxId: string;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_INGRESS_HOST: "sbx.localhost" });
    const org = await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "Acme" });
    orgId = org.body.id;
    const project = await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/projects`, { name: "web" });
    expect(project.status).toBe(201);
    projectId = project.body.id;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await signInWithToken(page, platform.url, platform.token);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it("creates and starts a sandbox from the list and opens its detail view", async () => {
    await page.goto(`${platform.url}/projects/${projectId}/sandboxes`);
    await page.getByRole("button", { name: "New sandbox" }).click();
    await page.getByRole("dialog").getByLabel("Name").fill("box");
    await page.getByRole("button", { name: "Create sandbox" }).click();
    await expect.poll(() => page.getByTestId("state-box").textContent(), { timeout: 30_000 }).toBe("running");
    await page.getByRole("link", { name: "box", exact: true }).click();
    await page.waitForURL(/\/sandboxes\/sbx_/);
    sandboxId = new URL(page.url()).pathname.split("/").at(-1)!;
    await expect.poll(() => page.getByRole("heading", { name: "Sandbox box" }).isVisible()).toBe(true);
    expect(await page.getByTestId("current-revision").textContent()).toBe("1");
    await expect.poll(() => page.getByText("No ports exposed.").isVisible()).toBe(true);
    // No limits asked for: nothing to warn about.
    expect(await page.getByTestId("limits").textContent()).toBe("none set");
    expect(await page.getByTestId("unenforced-limits").count()).toBe(0);
  });

  it("warns of limits that do not hold here, in the list and on the detail view", async () => {
    // The local driver never limits disk (and memory only with writable cgroups): the API says so.
    const created = await platform.api<Sandbox>("POST", `/v1/projects/${projectId}/sandboxes`, {
      name: "limited",
      resources: { memoryMiB: 64, diskMiB: 256 },
    });
    expect(created.status).toBe(201);
    const unenforced = created.body.unenforcedLimits!;
    expect(unenforced.resources).toContain("diskMiB");
    const named = { cpuMillicores: "CPU", memoryMiB: "memory", diskMiB: "disk", maxProcesses: "processes" } as const;
    const names = unenforced.resources.map((r) => named[r]).join(", ");

    await page.goto(`${platform.url}/projects/${projectId}/sandboxes`);
    const list = page.getByRole("table", { name: "Sandboxes" });
    const row = list.getByRole("row", { name: /limited/ });
    const marker = row.getByText(/^Limits? not enforced: /);
    await expect.poll(() => marker.textContent()).toMatch(new RegExp(`^Limits? not enforced: ${names}$`));
    const box = list.getByRole("row", { name: /\bbox\b/ });
    expect(await box.getByText(/not enforced/).count()).toBe(0);
    // A disclosure: the keyboard opens it to say why.
    const reason = row.getByText(unenforced.reason, { exact: true });
    expect(await reason.isVisible()).toBe(false);
    await marker.focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => reason.isVisible()).toBe(true);
    await screenshot(page, "sandboxes-unenforced-limits");

    await row.getByRole("link", { name: "limited" }).click();
    await page.waitForURL(/\/sandboxes\/sbx_/);
    const warning = page.getByRole("status", { name: /not enforced on this host/ });
    await expect.poll(() => warning.isVisible()).toBe(true);
    const items = await warning.getByRole("listitem").allTextContents();
    expect(items).toHaveLength(unenforced.resources.length);
    expect(items).toContain("Disk: 256 MiB");
    if (unenforced.resources.includes("memoryMiB")) expect(items).toContain("Memory: 64 MiB");
    expect(await warning.textContent()).toContain(`Why: ${unenforced.reason}`);
    expect(await page.getByTestId("limits").textContent()).toBe("Memory: 64 MiB, Disk: 256 MiB");
    await page.waitForLoadState("networkidle");
    expect((await seriousViolations(page)).join("\n")).toBe("");
    await screenshot(page, "sandbox-detail-unenforced-limits");

    // Without the limits, the warning goes.
    const limitedId = created.body.id;
    const unlimited = await platform.api("PATCH", `/v1/projects/${projectId}/sandboxes/${limitedId}`, {
      resources: {},
    });
    expect(unlimited.status).toBe(200);
    await page.reload();
    await expect.poll(() => page.getByTestId("limits").textContent()).toBe("none set");
    expect(await page.getByTestId("unenforced-limits").count()).toBe(0);
    // Back to the first sandbox, where the next steps go on.
    await page.goto(`${platform.url}/projects/${projectId}/sandboxes/${sandboxId}`);
  });

  it("shows a new revision with its ports, rolls back after confirming and shows the rollback", async () => {
    const changed = await platform.api("PATCH", `/v1/projects/${projectId}/sandboxes/${sandboxId}`, {
      ports: [{ port: 8080, visibility: "public" }],
      reason: "serve the app",
    });
    expect(changed.status).toBe(200);
    const slug = (changed.body as { slug: string }).slug;
    await page.reload();
    await expect.poll(() => page.getByTestId("current-revision").textContent(), { timeout: 30_000 }).toBe("2");
    const revisions = page.getByRole("table", { name: "Revisions" });
    await expect.poll(() => revisions.getByRole("row", { name: /serve the app/ }).isVisible()).toBe(true);
    const ports = page.getByRole("table", { name: "Exposed ports" });
    await expect.poll(() => ports.textContent()).toContain(`8080-${slug}.`);
    expect(await ports.textContent()).toContain("public");
    const address = `https://8080-${slug}.sbx.localhost`;
    expect(await ports.getByRole("link", { name: address }).getAttribute("href")).toBe(address);
    expect(await ports.getByRole("button", { name: "Copy the address of port 8080" }).isVisible()).toBe(true);

    await page.getByRole("button", { name: "Roll back to revision 1" }).click();
    const dialog = page.getByRole("dialog");
    await expect.poll(() => dialog.getByText(/The running sandbox restarts/).isVisible()).toBe(true);
    await dialog.getByLabel("Reason").fill("back to no ports");
    await dialog.getByRole("button", { name: "Roll back" }).click();
    await expect.poll(() => dialog.isVisible(), { timeout: 60_000 }).toBe(false);
    await expect.poll(() => page.getByTestId("current-revision").textContent()).toBe("3");
    await expect.poll(() => revisions.getByRole("row", { name: /back to no ports/ }).isVisible()).toBe(true);
    await expect.poll(() => page.getByText("No ports exposed.").isVisible()).toBe(true);
    const after = await platform.api<{ ports: unknown[]; currentRevision: number }>(
      "GET",
      `/v1/projects/${projectId}/sandboxes/${sandboxId}`,
    );
    expect(after.body).toMatchObject({ ports: [], currentRevision: 3 });
  });

  it("shows the effective policy and an open shell session, with no serious accessibility issue", async () => {
    await expect.poll(() => page.getByTestId("detail-state").textContent(), { timeout: 30_000 }).toBe("running");
    const opened = await platform.api<{ id: string }>("POST", `/v1/projects/${projectId}/shell-sessions`, {
      sandboxId,
    });
    expect(opened.status).toBe(201);
    await page.reload();
    const actions = page.getByRole("table", { name: "Sandbox actions" });
    await expect.poll(() => actions.getByRole("row", { name: /sandbox:exec/ }).isVisible()).toBe(true);
    await expect.poll(() => page.getByTestId("egress").textContent()).toMatch(/^Egress: \w+/);
    const sessions = page.getByRole("table", { name: "Shell sessions" });
    await expect.poll(() => sessions.getByRole("row", { name: new RegExp(opened.body.id) }).isVisible()).toBe(true);
    await page.waitForLoadState("networkidle");
    expect((await seriousViolations(page)).join("\n")).toBe("");
    await screenshot(page, "sandbox-detail");
  });

  it("shows the rule of a policy that denies a rollback, and the binding in the effective policy", async () => {
    const policy = await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/policies`, {
      name: "frozen",
      cedar: '@id("no-sandbox-changes")\nforbid(principal, action == Action::"sandbox:update", resource);',
    });
    expect(policy.status).toBe(201);
    const bound = await platform.api("POST", `/v1/orgs/${orgId}/policy-bindings`, { policyId: policy.body.id });
    expect(bound.status).toBe(201);
    await page.reload();
    await page.getByRole("button", { name: "Roll back to revision 2" }).click();
    const dialog = page.getByRole("dialog");
    // The reason has the focus, and Enter submits.
    const reason = dialog.getByLabel("Reason");
    await expect.poll(() => hasFocus(reason)).toBe(true);
    await page.keyboard.press("Enter");
    await expect.poll(() => dialog.getByTestId("rule-id").textContent()).toBe("Rule: no-sandbox-changes");
    expect(await dialog.getByRole("alert").textContent()).toMatch(/\S/);
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.count()).toBe(0);
    // Opened again, it shows no earlier failure; Cancel closes it.
    await page.getByRole("button", { name: "Roll back to revision 2" }).click();
    await reason.waitFor();
    expect(await dialog.getByRole("alert").count()).toBe(0);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    expect(await page.getByTestId("current-revision").textContent()).toBe("3");
    await page.getByRole("button", { name: "Re-evaluate" }).click();
    await expect
      .poll(() =>
        page
          .getByRole("table", { name: "Policy bindings" })
          .getByRole("row", { name: /frozen/ })
          .isVisible(),
      )
      .toBe(true);
    const update = page.getByRole("table", { name: "Sandbox actions" }).getByRole("row", { name: /sandbox:update/ });
    await expect.poll(() => update.textContent()).toMatch(/deny.*no-sandbox-changes/);
    expect((await seriousViolations(page)).join("\n")).toBe("");
    await screenshot(page, "sandbox-detail-denied");
  });

  it("a viewer sees the rollback disabled with the reason, and still reads the policy and sessions", async () => {
    const minted = await platform.api<{ token: string }>("POST", `/v1/orgs/${orgId}/api-tokens`, {
      name: "viewer",
      role: "viewer",
    });
    expect(minted.status).toBe(201);
    const viewerContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const viewer = await viewerContext.newPage();
    viewer.setDefaultTimeout(15_000);
    try {
      await signInWithToken(viewer, platform.url, minted.body.token, `/projects/${projectId}/sandboxes/${sandboxId}`);
      await viewer.waitForURL(/\/sandboxes\/sbx_/);
      const rollback = viewer.getByRole("button", { name: "Roll back to revision 1" });
      await expect.poll(() => rollback.isDisabled()).toBe(true);
      await expect
        .poll(() => viewer.getByText("Rolling back: Needs the developer role on the project").isVisible())
        .toBe(true);
      await expect
        .poll(() => viewer.getByRole("table", { name: "Sandbox actions" }).getByRole("row").count())
        .toBeGreaterThan(1);
      expect(await viewer.getByRole("table", { name: "Revisions" }).getByRole("row").count()).toBe(4);
      await expect
        .poll(() => viewer.getByRole("table", { name: "Shell sessions" }).getByRole("row").count())
        .toBeGreaterThan(1);
    } finally {
      await viewerContext.close();
    }
  });
});
