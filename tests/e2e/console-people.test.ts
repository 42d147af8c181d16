import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import { startOidcProvider } from "@agentplane/testkit/oidc";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot, seriousViolations } from "./console/browser.ts";
import { startPlatform } from "./console/platform.ts";

const chromium = requireChromium();

/**
 * The console's people and governance pages in Debian's Chromium against the embedded platform:
 * invitations accepted without an identity provider, teams, members, credentials, drift and key
 * rotation; then a second platform with a local identity provider for the OIDC sign-in and an
 * invitation accepted by the identity that signs in. One browser for the file.
 */
describe.skipIf(!chromium.available)(`console people pages in a browser${chromium.reason}`, () => {
  let browser: Browser;
  const violations: Record<string, string[]> = {};

  async function check(page: Page, name: string) {
    await page.waitForLoadState("networkidle");
    violations[name] = await seriousViolations(page);
    await screenshot(page, name);
    expect(violations[name], name).toEqual([]);
  }

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return { context, page };
  }

  const visible = (page: Page, text: string | RegExp) =>
    expect.poll(() => page.getByText(text).first().isVisible(), { timeout: 15_000 }).toBe(true);

  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  describe("without an identity provider", () => {
    let platform: Awaited<ReturnType<typeof startPlatform>>;
    let owner: Page;
    let orgId: string;
    let projectId: string;
    let link: string;

    beforeAll(async () => {
      platform = await startPlatform();
      orgId = (await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "People" })).body.id;
      projectId = (await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/projects`, { name: "web" })).body.id;
      ({ page: owner } = await newPage());
      await owner.goto(`${platform.url}/orgs/${orgId}/invitations`);
      await owner.waitForURL(/\/sign-in\?next=/);
      await owner.getByLabel("API token").fill(platform.token);
      await owner.getByRole("button", { name: "Sign in" }).click();
      await owner.waitForURL(`${platform.url}/orgs/${orgId}/invitations`);
    }, 180_000);
    afterAll(async () => {
      await platform?.stop();
    });

    it("invites by email: the API's field error shows next to the field, then the link is shown", async () => {
      await owner.getByRole("button", { name: "Invite someone" }).click();
      const dialog = owner.getByRole("dialog");
      await dialog.getByLabel("Email").fill("not-an-email");
      await dialog.getByRole("button", { name: "Invite" }).click();
      // The 400's errors[].pointer (/body/email) lands under the Email field, as its description.
      await expect
        .poll(async () => (await dialog.getByLabel("Email").getAttribute("aria-invalid")) === "true")
        .toBe(true);
      await dialog.getByLabel("Email").fill("ivy@acme.test");
      await dialog.getByLabel("Role").selectOption("member");
      await dialog.getByRole("button", { name: "Invite" }).click();
      const shown = dialog.getByLabel("Invitation link", { exact: true });
      await expect.poll(async () => (await shown.inputValue()).includes("#token=")).toBe(true);
      link = await shown.inputValue();
      expect(link).toMatch(new RegExp(`^${platform.url}/invitations/inv_[0-9a-z]+#token=`));
      await check(owner, "invitation-link");
      await dialog.getByRole("button", { name: "Done" }).click();
      await visible(owner, "ivy@acme.test");
      await check(owner, "invitations");
    });

    it("shows the last-owner guard on the members page", async () => {
      await owner.getByRole("link", { name: "Members" }).click();
      await visible(owner, /The last owner cannot be removed or demoted/);
      expect(
        await owner
          .getByRole("combobox", { name: /Role of/ })
          .first()
          .isDisabled(),
      ).toBe(true);
      await check(owner, "members");
    });

    it("fits a phone screen: the pages use its width and none scrolls sideways", async () => {
      await owner.setViewportSize({ width: 390, height: 844 });
      try {
        for (const path of ["members", "invitations"]) {
          await owner.goto(`${platform.url}/orgs/${orgId}/${path}`);
          await visible(owner, path === "members" ? /The last owner/ : "ivy@acme.test");
          const scrollWidth = await owner.evaluate<number>("document.documentElement.scrollWidth");
          const mainWidth = (await owner.locator("main").boundingBox())!.width;
          expect(scrollWidth, path).toBeLessThanOrEqual(390);
          // The navigation sits above the page, not beside it.
          expect(mainWidth, path).toBeGreaterThan(350);
          await screenshot(owner, `${path}-390`);
        }
      } finally {
        await owner.setViewportSize({ width: 1280, height: 800 });
      }
    });

    it("lets the invitee join by choosing a display name, signed in with a session", async () => {
      const { context, page } = await newPage();
      await page.goto(link);
      await visible(page, "Join People");
      await visible(page, /ivy@acme\.test is invited as member/);
      await check(page, "accept-invitation");
      await page.getByLabel("Display name").fill("Ivy Invitee");
      await page.getByRole("button", { name: "Join and sign in" }).click();
      await page.waitForURL(`${platform.url}/orgs/${orgId}`);
      await visible(page, "Ivy Invitee");
      const cookies = await context.cookies();
      expect(cookies.find((c) => c.name === "agentplane_session")).toMatchObject({ httpOnly: true });

      // A member: the pages say what the role may not do instead of letting the click fail.
      await page.getByRole("link", { name: "Invitations" }).click();
      await visible(page, /Needs the admin role in the organization \(you are member\)/);
      expect(await page.getByRole("button", { name: "Invite someone" }).isDisabled()).toBe(true);
      await check(page, "invitations-as-member");
      await page.getByRole("link", { name: "Policy drift" }).click();
      expect(await page.getByRole("button", { name: "Check now" }).isDisabled()).toBe(true);
      await page.getByRole("link", { name: "Credentials" }).click();
      await visible(page, /Needs the admin role on the project/);
      expect(await page.getByRole("button", { name: "New credential" }).isDisabled()).toBe(true);
      await context.close();

      // The link is used up; the audit trail has the membership change.
      const { context: later, page: again } = await newPage();
      await again.goto(link);
      await visible(again, "This invitation is accepted and can no longer be accepted.");
      await later.close();
      await expect
        .poll(
          async () =>
            (
              await platform.api<{ items?: { action: string }[] }>(
                "GET",
                `/v1/orgs/${orgId}/audit-trail?action=invitation.accepted`,
              )
            ).body.items?.length ?? 0,
          { timeout: 15_000 },
        )
        .toBeGreaterThan(0);
    });

    it("creates a team with a member and project access", async () => {
      await owner.getByRole("link", { name: "Teams" }).click();
      await owner.getByLabel("New team").fill("platform");
      await owner.getByRole("button", { name: "Create team" }).click();
      await owner.getByRole("button", { name: /Members and access/ }).click();
      await owner.getByLabel("Add a member").selectOption({ label: "Ivy Invitee" });
      await owner.getByRole("button", { name: "Add to team" }).click();
      await visible(owner, /Remove Ivy Invitee from platform|Ivy Invitee/);
      await owner.getByLabel("Project", { exact: true }).selectOption({ label: "web" });
      await owner.getByLabel("Project role").selectOption("developer");
      await owner.getByRole("button", { name: "Grant access" }).click();
      await expect.poll(() => owner.getByRole("table", { name: "Project access of platform" }).isVisible()).toBe(true);
      await check(owner, "teams");
    });

    it("creates, rotates and deletes a credential without ever showing its secret", async () => {
      await owner.getByRole("link", { name: "Credentials" }).click();
      await owner.getByRole("button", { name: "New credential" }).click();
      const dialog = owner.getByRole("dialog");
      await dialog.getByLabel("Name").fill("ci-bearer");
      await dialog.getByLabel("Kind").selectOption("http-bearer");
      await dialog.getByLabel("token").fill("s3cret-bearer-value");
      await dialog.getByRole("button", { name: "Create credential" }).click();
      const row = owner.getByRole("row", { name: /ci-bearer/ });
      await expect.poll(() => row.isVisible()).toBe(true);
      expect(await owner.content()).not.toContain("s3cret-bearer-value");
      await check(owner, "credentials");
      await owner.getByRole("button", { name: "Rotate ci-bearer" }).click();
      await owner.getByRole("dialog").getByLabel("token").fill("s3cret-bearer-value-2");
      await owner.getByRole("dialog").getByRole("button", { name: "Rotate" }).click();
      await expect.poll(async () => (await row.locator("td").nth(3).textContent())?.trim()).toBe("2");
      expect(await owner.content()).not.toContain("s3cret-bearer-value-2");
      await owner.getByRole("button", { name: "Delete ci-bearer" }).click();
      await expect.poll(() => row.isVisible()).toBe(false);
      const listed = await platform.api<{ items: unknown[] }>("GET", `/v1/projects/${projectId}/credentials`);
      expect(listed.body.items).toEqual([]);
    });

    it("shows the drift report and recomputes it on demand", async () => {
      await owner.getByRole("link", { name: "Policy drift" }).click();
      await visible(owner, /entries, \d+ resources/);
      await owner.getByRole("button", { name: "Check now" }).click();
      await visible(owner, /Audited /);
      await check(owner, "drift");
    });

    it("asks the decision API whether an exec would be allowed and shows the deciding rule", async () => {
      const cedar = `@id("allow-exec")
permit(principal, action == Action::"sandbox:exec", resource);
@id("no-rm")
forbid(principal, action == Action::"sandbox:exec", resource) when { context.program == "rm" };`;
      const policy = await platform.api<{ id: string }>("POST", `/v1/projects/${projectId}/policies`, {
        name: "no-rm",
        cedar,
      });
      const bound = await platform.api("POST", `/v1/projects/${projectId}/policy-bindings`, {
        policyId: policy.body.id,
      });
      expect(bound.status).toBe(201);
      await owner.getByRole("link", { name: "Would this be allowed?" }).click();
      await owner.getByLabel("Sandbox id").fill("sbx_example");
      await owner.getByLabel("Context (JSON)").fill('{ "argv": ["rm", "-rf", "/tmp/x"] }');
      // Bindings take effect within seconds: ask until the answer reflects this one.
      await expect
        .poll(
          async () => {
            await owner.getByRole("button", { name: "Ask" }).click();
            await owner
              .getByRole("status")
              .filter({ hasText: /Allowed|Denied/ })
              .waitFor();
            return owner
              .getByRole("status")
              .filter({ hasText: /Allowed|Denied/ })
              .textContent();
          },
          { timeout: 20_000 },
        )
        .toBe("Denied");
      await expect.poll(() => owner.getByRole("cell", { name: "no-rm (forbid)" }).isVisible()).toBe(true);
      await owner.getByLabel("Context (JSON)").fill("not json");
      await owner.getByRole("button", { name: "Ask" }).click();
      await visible(owner, /Not JSON/);
      await owner.getByLabel("Context (JSON)").fill('{ "argv": ["ls"] }');
      await owner.getByRole("button", { name: "Ask" }).click();
      await expect
        .poll(() =>
          owner
            .getByRole("status")
            .filter({ hasText: /Allowed|Denied/ })
            .textContent(),
        )
        .toBe("Allowed");

      // An admin asks for a sandbox of the project, chosen from its list.
      const sandbox = await platform.api<{ id: string }>("POST", `/v1/projects/${projectId}/sandboxes`, {
        name: "worker",
      });
      expect(sandbox.status).toBe(201);
      await owner.getByLabel("Ask for").selectOption({ label: "A sandbox" });
      await owner.getByRole("button", { name: "Ask" }).click();
      await visible(owner, "Required");
      await owner.getByLabel("Which sandbox").selectOption({ label: `worker · ${sandbox.body.id}` });
      await owner.getByLabel("Context (JSON)").fill('{ "argv": ["rm", "x"] }');
      await owner.getByRole("button", { name: "Ask" }).click();
      await visible(owner, "Decided for worker (sandbox)");
      await expect
        .poll(() =>
          owner
            .getByRole("status")
            .filter({ hasText: /Allowed|Denied/ })
            .textContent(),
        )
        .toBe("Denied");
      await check(owner, "would-this-be-allowed");
    });

    it("rotates a project's signing keys and links its JWKS", async () => {
      await owner.getByRole("link", { name: "Projects" }).click();
      await owner.getByRole("button", { name: "Rotate keys of web" }).click();
      await visible(owner, /New key .+ stays published until/);
      const jwks = await owner.getByRole("link", { name: "JWKS" }).getAttribute("href");
      const keys = await platform.api<{ keys: unknown[] }>("GET", jwks!);
      expect(keys.body.keys.length).toBe(2);
      await check(owner, "projects-keys");
    });
  });

  describe("with an identity provider", () => {
    let provider: Awaited<ReturnType<typeof startOidcProvider>>;
    let platform: Awaited<ReturnType<typeof startPlatform>>;
    let orgId: string;

    beforeAll(async () => {
      provider = await startOidcProvider({ clientId: "console", clientSecret: "console-secret" });
      provider.state.user = { sub: "olive-1", email: "olive@acme.test", emailVerified: true, name: "Olive Oidc" };
      platform = await startPlatform({
        OIDC_ISSUER: provider.url,
        OIDC_CLIENT_ID: "console",
        OIDC_CLIENT_SECRET: "console-secret",
      });
      orgId = (await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "Federated" })).body.id;
    }, 180_000);
    afterAll(async () => {
      await platform?.stop();
      await provider?.close();
    });

    it("signs in with authorization code + PKCE and returns to the page asked for", async () => {
      const { context, page } = await newPage();
      await page.goto(`${platform.url}/account/sessions`);
      await page.waitForURL(/\/sign-in\?next=/);
      await check(page, "sign-in-oidc");
      await page.getByRole("link", { name: "Sign in with your identity provider" }).click();
      await page.waitForURL(`${platform.url}/account/sessions`);
      await visible(page, "Olive Oidc");
      await visible(page, "oidc");
      expect(provider.state.authorizeRequests.at(-1)?.get("code_challenge_method")).toBe("S256");
      await context.close();
    });

    it("binds an invitation to the identity that signs in and accepts it", async () => {
      const invited = await platform.api<{ acceptUrl: string }>("POST", `/v1/orgs/${orgId}/invitations`, {
        email: "olive@acme.test",
        role: "viewer",
      });
      const { context, page } = await newPage();
      // The link's token rides in its fragment: no address the browser asks for (the platform's,
      // the identity provider's) may carry it, the sign-in's way back included.
      const token = new URL(invited.body.acceptUrl).hash.replace(/^#token=/, "");
      expect(token.length).toBeGreaterThan(10);
      const asked: string[] = [];
      page.on("request", (request) => asked.push(request.url()));
      await page.goto(invited.body.acceptUrl);
      await visible(page, "Join Federated");
      await page.getByRole("link", { name: "Sign in with your identity provider" }).click();
      // Back on the invitation's page, which has its fragment again (a reload keeps working).
      await visible(page, "Join Federated");
      expect(new URL(page.url()).hash).toBe(`#token=${token}`);
      expect(asked.filter((url) => url.includes(token) || url.includes(encodeURIComponent(token)))).toEqual([]);
      await page.getByRole("button", { name: "Accept invitation" }).click();
      await page.waitForURL(`${platform.url}/orgs/${orgId}`);
      const members = await platform.api<{ items: { email?: string; role: string }[] }>(
        "GET",
        `/v1/orgs/${orgId}/members`,
      );
      expect(members.body.items).toContainEqual(expect.objectContaining({ email: "olive@acme.test", role: "viewer" }));
      await context.close();
    });
  });
});
