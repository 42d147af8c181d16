import type { LocalServer } from "@agentplane/testkit";
import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usd, usedPercent } from "../../apps/console/src/lib/spend.ts";
import { hasFocus, screenshot, seriousViolations, signInWithToken } from "./console/browser.ts";
import { startPlatform } from "./console/platform.ts";
import { startRelay } from "./console/relay.ts";
import {
  MODEL_BEARER,
  startMcpStandIn,
  startModelStandIn,
  startOpenApiStandIn,
  startStsStandIn,
} from "./console/upstreams.ts";

const chromium = requireChromium();
const HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
const SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

/**
 * The console's connection, inference, usage and installation pages in Debian's Chromium against
 * the embedded platform, with local stand-ins for an MCP server, an OpenAPI-described API and STS.
 * One browser for the file; the scenarios run in order.
 */
describe.skipIf(!chromium.available)(`console operations pages${chromium.reason}`, () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let mcp: LocalServer & { calls: string[] };
  let openapi: LocalServer & { revision: number };
  let sts: LocalServer & { keyIds: string[] };
  let model: LocalServer & { calls: number };
  let relay: Awaited<ReturnType<typeof startRelay>> | undefined;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let orgId: string;
  let projectId: string;
  const foreignRequests: string[] = [];

  async function check(name: string, target: Page = page) {
    await target.waitForLoadState("networkidle");
    const violations = await seriousViolations(target);
    await screenshot(target, name);
    expect(violations.join("\n"), name).toBe("");
  }

  const dialog = () => page.getByRole("dialog");

  beforeAll(async () => {
    [mcp, openapi, sts, model] = await Promise.all([
      startMcpStandIn(),
      startOpenApiStandIn(),
      startStsStandIn(),
      startModelStandIn(),
    ]);
    platform = await startPlatform({
      CONNECTOR_ALLOWED_HOSTS: "127.0.0.1",
      CLOUD_A_BEARER_TOKEN: MODEL_BEARER,
      CLOUD_A_ENDPOINT_URL: model.url,
    });
    orgId = (await platform.api<{ id: string }>("POST", "/v1/orgs", { name: "Ops" })).body.id;
    projectId = (await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/projects`, { name: "web" })).body.id;
    const credential = await platform.api("POST", `/v1/projects/${projectId}/credentials`, {
      name: "prod keys",
      kind: "aws-keys",
      accessKeyId: "AKIACONSOLEEXAMPLE",
      secretAccessKey: "console-secret-example",
    });
    expect(credential.status).toBe(201);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on("request", (req) => {
      const url = new URL(req.url());
      if (["blob:", "data:"].includes(url.protocol)) return;
      if (url.origin !== platform.url) foreignRequests.push(req.url());
    });
    await signInWithToken(page, platform.url, platform.token);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    await platform?.stop();
    await Promise.all([mcp?.close(), openapi?.close(), sts?.close(), model?.close()]);
  });

  it("registers a cluster: the API's field error beside the field, the tunnel token once, rotate", async () => {
    // The owner also has the installation's first organization: open this one's page.
    await page.goto(`${platform.url}/orgs/${orgId}/connections`);
    await page.waitForURL(/\/connections\?project=prj_/);
    await expect.poll(() => page.getByText("No clusters registered.").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Register cluster" }).click();
    await dialog().getByRole("button", { name: "Register" }).click();
    // The API's errors[].pointer (/body/name) lands next to the Name field.
    const name = dialog().getByLabel("Name");
    await expect.poll(() => name.getAttribute("aria-invalid")).toBe("true");
    expect(
      await dialog()
        .locator(`#${await name.getAttribute("aria-describedby")}`)
        .textContent(),
    ).toBeTruthy();
    await check("cluster-field-error");
    await name.fill("edge-1");
    await dialog().getByRole("button", { name: "Register" }).click();
    const secret = page.getByLabel("Tunnel token", { exact: true });
    await expect.poll(async () => (await secret.inputValue()).length).toBeGreaterThan(20);
    const first = await secret.inputValue();
    expect(await page.getByRole("button", { name: "Done" }).isDisabled()).toBe(true);
    await check("cluster-token");
    await page.getByLabel("I have stored it").check();
    await page.getByRole("button", { name: "Done" }).click();
    await expect.poll(() => page.getByTestId("cluster-status-edge-1").textContent()).toBe("pending");
    expect(await page.content()).not.toContain(first);

    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Rotate token of edge-1" }).click();
    await expect.poll(async () => (await secret.inputValue()).length).toBeGreaterThan(20);
    const rotated = await secret.inputValue();
    expect(rotated).not.toBe(first);
    await page.getByLabel("I have stored it").check();
    await page.getByRole("button", { name: "Done" }).click();

    // The relay dials in with the rotated token: the page follows the status without a reload.
    const clusterId = (await page
      .getByRole("row", { name: /edge-1/ })
      .locator("td")
      .nth(1)
      .textContent())!.trim();
    relay = await startRelay({ url: platform.url, clusterId, tunnelToken: rotated });
    await expect
      .poll(() => page.getByTestId("cluster-status-edge-1").textContent(), { timeout: 40_000 })
      .toBe("connected");
    await expect.poll(() => page.getByRole("row", { name: /edge-1/ }).textContent()).toContain("v1.32.4");
    await check("connections");
  });

  it("pages through the clusters instead of fetching them all", async () => {
    for (let i = 0; i < 20; i++) {
      const res = await platform.api("POST", `/v1/projects/${projectId}/clusters`, { name: `bulk-${i}` });
      expect(res.status).toBe(201);
    }
    await page.reload();
    const rows = page.getByRole("table", { name: "Clusters" }).getByRole("row");
    await expect.poll(() => rows.count()).toBe(21); // the header and one page of 20
    await page.getByRole("button", { name: "More clusters" }).click();
    await expect.poll(() => rows.count()).toBe(22);
    expect(await page.getByRole("button", { name: "More clusters" }).count()).toBe(0);
  });

  it("edits a cluster: the API's errors beside the name and the labels, then the change saved", async () => {
    await page.getByRole("button", { name: "Edit edge-1" }).click();
    const name = dialog().getByLabel("Name");
    await name.fill(" ");
    await dialog().getByLabel("Labels").fill("bad key!=x");
    await dialog().getByRole("button", { name: "Save" }).click();
    await expect.poll(() => name.getAttribute("aria-invalid")).toBe("true");
    await expect.poll(() => dialog().getByLabel("Labels").getAttribute("aria-invalid")).toBe("true");
    await check("cluster-edit-errors");
    await dialog().getByLabel("Labels").fill("team=ml\nnot a line");
    await expect
      .poll(() =>
        dialog()
          .getByText(/write key=value/)
          .isVisible(),
      )
      .toBe(true);
    await name.fill("edge-1");
    await dialog().getByLabel("Description").fill("the edge cluster");
    await dialog().getByLabel("Labels").fill("team=ml\ntier=edge");
    await dialog().getByRole("button", { name: "Save" }).click();
    await expect.poll(() => dialog().count()).toBe(0);
    const listed = await platform.api<{
      items: { name: string; description?: string; labels: Record<string, string> }[];
    }>("GET", `/v1/projects/${projectId}/clusters?limit=200`);
    expect(listed.body.items.find((c) => c.name === "edge-1")).toMatchObject({
      description: "the edge cluster",
      labels: { team: "ml", tier: "edge" },
    });
  });

  it("connects an AWS account through its credential and tests it against STS", async () => {
    await page.getByRole("button", { name: "Connect AWS account" }).click();
    await dialog().getByLabel("Name").fill("prod");
    await expect.poll(() => dialog().getByLabel("Credential").locator("option").count()).toBe(1);
    await dialog().getByLabel("Endpoint overrides").fill(`sts=${sts.url}`);
    await dialog().getByRole("button", { name: "Connect" }).click();
    await expect.poll(() => page.getByRole("row", { name: /prod/ }).isVisible()).toBe(true);
    await page.getByRole("button", { name: "Test prod" }).click();
    await expect.poll(() => page.getByText("arn:aws:iam::123456789012:user/console").isVisible()).toBe(true);
    expect(sts.keyIds).toContain("AKIACONSOLEEXAMPLE");

    // Edited in place: a bad region is refused beside its field, a good one is saved.
    await page.getByRole("button", { name: "Edit prod" }).click();
    const region = dialog().getByLabel("Default region");
    await region.fill("nowhere 1");
    await dialog().getByRole("button", { name: "Save" }).click();
    await expect.poll(() => region.getAttribute("aria-invalid")).toBe("true");
    await check("aws-connection-edit-error");
    await region.fill("eu-west-1");
    await dialog().getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.getByRole("row", { name: /prod/ }).textContent()).toContain("eu-west-1");
  });

  it("creates an MCP connector after previewing its tools, hides a tool and calls one from its schema", async () => {
    await page.getByRole("button", { name: "New connector" }).click();
    // The first source has the focus.
    const first = dialog().getByLabel("MCP server URL");
    await expect.poll(() => hasFocus(first)).toBe(true);
    await dialog().getByLabel("Name").fill("helpers");
    await dialog().getByLabel("Server URL", { exact: true }).fill(mcp.url);
    await dialog().getByRole("button", { name: "Preview tools" }).click();
    await expect.poll(() => page.getByTestId("connector-preview").textContent()).toContain("2 tools");
    await check("connector-preview");
    await dialog().getByRole("button", { name: "Create connector" }).click();
    await page.getByRole("link", { name: "helpers" }).click();
    await page.waitForURL(/\/connectors\//);
    await expect.poll(() => page.getByRole("row", { name: /echo/ }).isVisible()).toBe(true);

    // The box follows the platform's answer: click, then see the row change.
    await page.getByLabel("add visible").click();
    await expect.poll(() => page.getByRole("row", { name: /add/ }).textContent()).toContain("hidden");
    await page.getByLabel("add visible").click();
    await expect.poll(() => page.getByRole("row", { name: /add/ }).textContent()).toContain("visible");

    // Limited to a team, shown by its name; hiding and showing again keeps the team.
    const team = await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/teams`, { name: "ml-team" });
    expect(team.status).toBe(201);
    await page.reload();
    await page.getByRole("button", { name: "Teams of add" }).click();
    await dialog().getByLabel("ml-team").check();
    await check("tool-teams");
    await dialog().getByRole("button", { name: "Limit to 1 team(s)" }).click();
    await expect.poll(() => page.getByTestId("tool-teams-add").textContent()).toBe("visible to ml-team");
    await page.getByLabel("add visible").click();
    await expect.poll(() => page.getByRole("row", { name: /add/ }).textContent()).toContain("hidden");
    await page.getByLabel("add visible").click();
    await expect.poll(() => page.getByTestId("tool-teams-add").textContent()).toBe("visible to ml-team");
    const serverId = page.url().split("/connectors/")[1]!.split(/[?#]/)[0]!;
    const listed = await platform.api<{ items: { name: string; teams?: string[] }[] }>(
      "GET",
      `/v1/mcp-servers/${serverId}/tools`,
    );
    expect(listed.body.items.find((t) => t.name === "add")?.teams).toEqual([team.body.id]);
    await page.getByRole("button", { name: "Teams of add" }).click();
    await dialog().getByLabel("ml-team").uncheck();
    await dialog().getByRole("button", { name: "Show to everyone" }).click();
    await expect.poll(() => page.getByTestId("tool-teams-add").count()).toBe(0);
    await expect.poll(() => page.getByRole("row", { name: /add/ }).textContent()).toContain("visible");

    await page.getByRole("button", { name: "Call echo" }).click();
    await dialog().getByRole("button", { name: "Call tool" }).click();
    await expect.poll(() => dialog().getByText("Required", { exact: true }).isVisible()).toBe(true);
    await dialog().getByLabel("text (required)").fill("hi");
    await dialog().getByLabel("times").fill("2");
    await dialog().getByRole("button", { name: "Call tool" }).click();
    await expect.poll(() => page.getByTestId("tool-result").textContent()).toContain("echo: hi echo: hi");
    expect(mcp.calls).toEqual(["echo"]);
    await check("tool-call");
    await page.keyboard.press("Escape");
    await check("connector");
  });

  it("shows the rule id when a policy denies a tool call", async () => {
    const policy = await platform.api<{ id: string }>("POST", `/v1/orgs/${orgId}/policies`, {
      name: "no tools",
      cedar: '@id("no-tool-calls")\nforbid(principal, action == Action::"tool:call", resource);',
    });
    expect(policy.status).toBe(201);
    const bound = await platform.api("POST", `/v1/orgs/${orgId}/policy-bindings`, { policyId: policy.body.id });
    expect(bound.status).toBe(201);
    await page.getByRole("button", { name: "Call add" }).click();
    await dialog().getByLabel("a (required)").fill("2");
    await dialog().getByLabel("b (required)").fill("3");
    await dialog().getByRole("button", { name: "Call tool" }).click();
    await expect.poll(() => dialog().getByTestId("rule-id").textContent()).toBe("Rule: no-tool-calls");
    expect(mcp.calls).toEqual(["echo"]);
    await check("tool-call-denied");
    await page.keyboard.press("Escape");
  });

  it("creates a connector from an OpenAPI description, then reviews and promotes its changed spec", async () => {
    await page.getByRole("link", { name: "All connections" }).click();
    await page.getByRole("button", { name: "New connector" }).click();
    await dialog().getByLabel("OpenAPI description URL").check();
    await dialog().getByLabel("Name").fill("orders");
    await dialog().getByLabel("Description URL", { exact: true }).fill(`${openapi.url}/openapi.json`);
    await dialog().getByRole("button", { name: "Preview tools" }).click();
    await expect.poll(() => page.getByTestId("connector-preview").textContent()).toContain("listOrders");
    // Enter in a field submits.
    await dialog().getByLabel("Description URL", { exact: true }).press("Enter");
    await expect.poll(() => dialog().count()).toBe(0);
    await page.getByRole("link", { name: "orders" }).click();
    await expect.poll(() => page.getByRole("row", { name: /listOrders/ }).isVisible()).toBe(true);

    openapi.revision = 1;
    await page.getByRole("button", { name: "Fetch the source again" }).click();
    await expect.poll(() => page.getByText("a pending spec waits for promotion").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Show changes" }).click();
    await expect.poll(() => page.getByTestId("spec-diff").textContent()).toContain("+ getOrder");
    await check("pending-spec");
    await page.getByRole("button", { name: "Promote" }).click();
    await expect.poll(() => page.getByRole("row", { name: /getOrder/ }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole("table", { name: "Pending specs" }).count()).toBe(0);
  });

  it("lists the inference providers and where each credential comes from", async () => {
    await page.getByRole("link", { name: "Inference", exact: true }).click();
    const table = page.getByRole("table", { name: "Model providers" });
    await expect.poll(() => table.isVisible()).toBe(true);
    // cloud-a has the installation's bearer (its environment); it is usable.
    const cloudA = table.getByRole("row", { name: /^cloud-a\b(?!-alt)/ });
    expect(await cloudA.textContent()).toContain("The installation's environment");
    expect(await page.getByTestId("usable-cloud-a").textContent()).toBe("yes");
    await check("inference");
  });

  it("charts usage by day, model and project and edits a spending limit with its status", async () => {
    // Three metered model calls through the inference proxy, billed to the project.
    for (const id of [HAIKU, HAIKU, SONNET]) {
      const res = await fetch(`${platform.url}/v1/projects/${projectId}/llm/cloud-a/us-east-1/model/${id}/invoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${platform.token}`, "content-type": "application/json" },
        body: JSON.stringify({
          anthropic_version: "bedrock-2023-05-31",
          max_tokens: 20,
          messages: [{ role: "user", content: "hi" }],
        }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    expect(model.calls).toBe(3);
    await expect
      .poll(
        async () =>
          (await platform.api<{ total: { requests: number } }>("GET", `/v1/orgs/${orgId}/usage-costs`)).body.total
            .requests,
        { timeout: 30_000 },
      )
      .toBe(3);
    await page.getByRole("link", { name: "Usage and spend" }).click();
    await expect.poll(() => page.getByTestId("usage-total").textContent()).toContain("over 3 requests");
    const byModel = page.getByRole("table", { name: "Cost by model" });
    await expect.poll(() => byModel.textContent()).toContain(SONNET);
    expect(await byModel.textContent()).toContain(HAIKU);
    await expect.poll(() => page.getByRole("table", { name: "Cost by project" }).textContent()).toContain("web");
    await expect.poll(() => page.getByTestId("chart-by-model").locator(".recharts-bar-rectangle").count()).toBe(2);
    await expect.poll(() => page.getByTestId("chart-by-day").locator("svg").count()).toBeGreaterThan(0);
    // Thirty zero-filled days from the timeseries endpoint.
    await expect
      .poll(() => page.getByTestId("chart-by-day").locator(".recharts-xAxis .recharts-cartesian-axis-tick").count())
      .toBeGreaterThan(5);
    await page.getByLabel("Window").selectOption("7");
    await page.waitForURL(/days=7/);
    await page.getByRole("button", { name: "New spending limit" }).click();
    await dialog().getByLabel("Amount (USD)").fill("-5");
    await dialog().getByRole("button", { name: "Create limit" }).click();
    await expect
      .poll(() =>
        dialog()
          .getByText(/An amount in US dollars/)
          .isVisible(),
      )
      .toBe(true);
    await dialog().getByLabel("Amount (USD)").fill("100");
    await dialog().getByLabel("Alert at (% of the amount)").fill("50, 90");
    await dialog().getByRole("button", { name: "Create limit" }).click();
    const row = page.getByRole("row", { name: /Organization/ });
    await expect.poll(() => row.textContent()).toContain("$100.00");
    // A second monthly limit for the organization is refused, naming the one to edit instead.
    await page.getByRole("button", { name: "New spending limit" }).click();
    await dialog().getByLabel("Amount (USD)").fill("30");
    await dialog().getByRole("button", { name: "Create limit" }).click();
    await expect
      .poll(() => dialog().getByRole("alert").textContent())
      .toMatch(/monthly spending limit for the organization exists already \(\w+\); edit that one instead/);
    await check("spending-limit-duplicate");
    await page.keyboard.press("Escape");
    expect(await page.getByRole("row", { name: /Organization/ }).count()).toBe(1);
    // Used and remaining as the platform counts them for this period (the calls above included).
    const status = await platform.api<{ items: { spentUsd: number; remainingUsd: number; periodEnd: string }[] }>(
      "GET",
      `/v1/orgs/${orgId}/spending-limits/status`,
    );
    const [limit] = status.body.items;
    expect(limit!.spentUsd).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId("spent-Organization").textContent()).toContain(usd(limit!.spentUsd));
    expect(await row.textContent()).toContain(usd(limit!.remainingUsd));
    expect(await row.textContent()).toMatch(/50, 90 %/);
    expect(await row.getByRole("progressbar").getAttribute("aria-valuenow")).toBe(
      String(usedPercent({ limitUsd: 100, spentUsd: limit!.spentUsd, reservedUsd: 0 })),
    );
    await page.getByRole("button", { name: "Edit the Organization monthly limit of $100.00" }).click();
    await dialog().getByLabel("Amount (USD)").fill("250");
    await dialog().getByRole("button", { name: "Save limit" }).click();
    await expect.poll(() => row.textContent()).toContain("$250.00");
    await expect.poll(() => row.textContent()).toContain(usd(250 - limit!.spentUsd));
    await check("usage");
  });

  it("shows the installation's status and, to its first owner, the installation trail", async () => {
    await page.getByRole("link", { name: "Installation" }).click();
    await expect.poll(() => page.getByTestId("installation-status").textContent()).toMatch(/activated|unactivated/);
    // The bootstrap token is the first owner's: the trail holds this sign-in (no organization yet).
    const trail = page.getByRole("table", { name: "Installation trail" });
    await expect.poll(() => trail.textContent()).toContain("createSession");
    await check("installation");
  });

  it("a viewer sees every control it may not use disabled, with the reason", async () => {
    const minted = await platform.api<{ token: string }>("POST", `/v1/orgs/${orgId}/api-tokens`, {
      name: "viewer",
      role: "viewer",
    });
    expect(minted.status).toBe(201);
    const viewerContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const viewer = await viewerContext.newPage();
    viewer.setDefaultTimeout(15_000);
    try {
      await signInWithToken(viewer, platform.url, minted.body.token, `/orgs/${orgId}/connections`);
      await viewer.waitForURL(/\/connections/);
      const register = viewer.getByRole("button", { name: "Register cluster" });
      await expect.poll(() => register.isDisabled()).toBe(true);
      await expect.poll(() => viewer.getByText("Needs the admin role on the project").first().isVisible()).toBe(true);
      expect(await viewer.getByRole("button", { name: "New connector" }).isDisabled()).toBe(true);
      await check("connections-viewer", viewer);
      // A connector's page: a viewer may read its tools but neither change nor call them.
      await viewer.getByRole("link", { name: "helpers" }).click();
      await expect.poll(() => viewer.getByRole("button", { name: "Call echo" }).isDisabled()).toBe(true);
      expect(await viewer.getByLabel("echo visible").isDisabled()).toBe(true);
      await expect
        .poll(() => viewer.getByText("Needs the developer role on the project").first().isVisible())
        .toBe(true);
      await check("connector-viewer", viewer);
      await viewer.getByRole("link", { name: "Usage and spend" }).click();
      await expect.poll(() => viewer.getByRole("button", { name: "New spending limit" }).isDisabled()).toBe(true);
      await expect
        .poll(() => viewer.getByText("Needs the admin role in the organization").first().isVisible())
        .toBe(true);
      await check("usage-viewer", viewer);
    } finally {
      await viewerContext.close();
    }
  });

  it("a refused connection shows a retry banner, and Retry brings the page back", async () => {
    await page.route("**/v1/**", (route) => route.abort("connectionrefused"));
    await page.getByRole("link", { name: "Connections", exact: true }).click();
    const banner = page.getByTestId("connection-lost");
    await expect.poll(() => banner.isVisible(), { timeout: 20_000 }).toBe(true);
    expect(await page.getByRole("heading", { name: "Connections", exact: true }).isVisible()).toBe(true);
    await check("connection-lost");
    await page.unroute("**/v1/**");
    await banner.getByRole("button", { name: "Retry" }).click();
    await expect.poll(() => banner.isVisible()).toBe(false);
    await expect.poll(() => page.getByTestId("cluster-status-edge-1").isVisible()).toBe(true);
  });

  it("made no request outside the installation", () => {
    expect(foreignRequests).toEqual([]);
  });

  it("with the platform stopped, the page stays and says so (never blank)", async () => {
    await platform.process.stop();
    await page.getByRole("link", { name: "Usage and spend" }).click();
    await page.waitForURL(/\/usage/);
    // The page renders from what it last had; the banner comes once its refresh fails.
    await expect.poll(() => page.getByRole("heading", { name: "Usage and spend" }).isVisible()).toBe(true);
    await expect.poll(() => page.getByTestId("connection-lost").isVisible(), { timeout: 20_000 }).toBe(true);
    expect(await page.getByRole("navigation", { name: "Console" }).isVisible()).toBe(true);
    expect(await page.getByTestId("usage-total").textContent()).toContain("over 3 requests");
    await screenshot(page, "platform-stopped");
  });
});
