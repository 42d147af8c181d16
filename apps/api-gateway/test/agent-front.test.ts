import { createHmac } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime, ensureWebAssets, loadConfig, type Runtime } from "@agentplane/agent-runtime";
import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { AGENT_MANAGE_HEADER } from "@agentplane/contracts/runtime";
import { silentLogger } from "@agentplane/service-kit";
import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

// The runtime behind /agent: a real one, its model unreachable (nothing here waits for an answer).
function runtimeEnv(home: string, extra: Record<string, string> = {}) {
  return {
    AGENT_HOME: home,
    LLM_PROVIDER: "cloud-b",
    CLOUD_B_API_KEY: "unused",
    CLOUD_B_BASE_URL: "http://127.0.0.1:9/anthropic/v1",
    HEARTBEAT_INTERVAL_MINUTES: "0",
    LOG_LEVEL: "silent",
    ...extra,
  };
}

describe("the gateway fronting the agent runtime at /agent", () => {
  let h: Harness;
  let runtime: Runtime;
  let runtimeUrl: string;
  const tokens: Record<"viewer" | "member" | "admin" | "otherOrg", string> = {
    viewer: "",
    member: "",
    admin: "",
    otherOrg: "",
  };
  const SECRET = "github-webhook-secret";

  beforeAll(async () => {
    h = await startHarness();
    const home = mkdtempSync(join(tmpdir(), "agent-front-"));
    runtime = await createRuntime(loadConfig(runtimeEnv(home)), { logger: silentLogger() });
    runtimeUrl = (await runtime.listen(0, "127.0.0.1")).url;

    const org = await call(h, "POST", "/v1/orgs", { body: { name: "Agent Org" } });
    const project = await call(h, "POST", `/v1/orgs/${org.body.id}/projects`, { body: { name: "agent" } });
    h.gateway.agent.connect({ url: runtimeUrl, projectId: project.body.id as string });
    for (const role of ["viewer", "member", "admin"] as const) {
      const created = await call(h, "POST", `/v1/orgs/${org.body.id}/api-tokens`, { body: { name: role, role } });
      expect(created.status).toBe(201);
      tokens[role] = created.body.token as string;
    }
    const other = await call(h, "POST", "/v1/orgs", { body: { name: "Other Org" } });
    const otherToken = await call(h, "POST", `/v1/orgs/${other.body.id}/api-tokens`, { body: { name: "outsider" } });
    tokens.otherOrg = otherToken.body.token as string;
  });

  afterAll(async () => {
    await runtime?.close();
    await h?.close();
  });

  it("keeps the runtime's own port on loopback by default", () => {
    expect(loadConfig(runtimeEnv(mkdtempSync(join(tmpdir(), "agent-front-")))).host).toBe("127.0.0.1");
    expect(new URL(runtimeUrl).hostname).toBe("127.0.0.1");
  });

  it("serves the web UI's page without a token, redirects /agent, and needs a token for the API", async () => {
    const page = await fetch(`${h.url}/agent/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    // It shares the console's origin, so it gets the console's policy: never framed, own scripts only.
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const bare = await fetch(`${h.url}/agent`, { redirect: "manual" });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toBe("/agent/");
    expect((await call(h, "GET", "/agent/api/agents/profile", { token: null })).status).toBe(401);
    expect((await call(h, "GET", "/agent/nothing-here", { token: null })).status).toBe(404);
  });

  it("lets viewers read, members chat, admins change settings; another organization gets 404", async () => {
    const profile = await call(h, "GET", "/agent/api/agents/profile", { token: tokens.viewer });
    expect(profile.status).toBe(200);
    expect(profile.body.verbose).toBe(false);
    // The project's agent data, as the platform's API answers: kept by no cache.
    expect(profile.headers.get("cache-control")).toBe("no-store");

    const viewerChange = await call(h, "PATCH", "/agent/api/agents/verbose", {
      token: tokens.viewer,
      body: { verbose: true },
    });
    expect(viewerChange.status).toBe(403);
    expect(String(viewerChange.body.detail)).toContain("agent:manage");
    expect((await call(h, "POST", "/agent/api/agents/threads", { token: tokens.viewer, body: {} })).status).toBe(403);

    expect((await call(h, "POST", "/agent/api/agents/threads", { token: tokens.member, body: {} })).status).toBe(201);
    const memberChange = await call(h, "PUT", "/agent/api/agents/webhooks/enabled", {
      token: tokens.member,
      body: { enabled: true },
    });
    expect(memberChange.status).toBe(403);

    const adminChange = await call(h, "PATCH", "/agent/api/agents/verbose", {
      token: tokens.admin,
      body: { verbose: true },
    });
    expect(adminChange.status).toBe(200);
    expect(adminChange.body.verbose).toBe(true);

    const outsider = await call(h, "GET", "/agent/api/agents/profile", { token: tokens.otherOrg });
    expect(outsider.status).toBe(404);
    const outsiderChange = await call(h, "PATCH", "/agent/api/agents/verbose", {
      token: tokens.otherOrg,
      body: { verbose: false },
    });
    expect(outsiderChange.status).toBe(404);
    expect((await call(h, "GET", "/agent/api/agents/profile", { token: tokens.admin })).body.verbose).toBe(true);
  });

  it("audits the API's changes and refusals with the caller", async () => {
    const audits: AuditRecorded[] = [];
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
    const refused = await call(h, "PATCH", "/agent/api/agents/verbose", {
      token: tokens.viewer,
      body: { verbose: true },
    });
    const done = await call(h, "PATCH", "/agent/api/agents/verbose", { token: tokens.admin, body: { verbose: false } });
    await h.bus.drain();
    const ids = [refused.headers.get("x-request-id"), done.headers.get("x-request-id")];
    const ours = audits.filter((a) => ids.includes(a.requestId ?? null) && a.action === "agent:api");
    expect(ours.map((a) => a.status).sort()).toEqual([200, 403]);
    expect(ours.every((a) => a.principal.type !== "anonymous")).toBe(true);
  });

  it("passes webhooks through unauthenticated to the receiver, which verifies the GitHub signature and runs a redelivery once", async () => {
    await call(h, "PUT", "/agent/api/agents/webhooks/enabled", { token: tokens.admin, body: { enabled: true } });
    const created = await call(h, "POST", "/agent/api/agents/webhook-subscriptions", {
      token: tokens.admin,
      body: { name: "gh", verification: { kind: "github", secret: SECRET } },
    });
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.body)).not.toContain(SECRET);

    const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const deliver = (sig: string, id: string) =>
      fetch(`${h.url}/agent/webhooks/gh`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "ping",
          "x-github-delivery": id,
          "x-hub-signature-256": sig,
        },
        body,
      });

    const bad = await deliver(`sha256=${"0".repeat(64)}`, "delivery-0");
    expect(bad.status).toBe(401);
    const first = await deliver(signature, "delivery-1");
    expect(first.status).toBe(202);
    const { runId } = (await first.json()) as { runId: string };
    const again = await deliver(signature, "delivery-1");
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: "accepted", runId, duplicate: true });
    const runs = await call(h, "GET", "/agent/api/agents/webhook-subscriptions/gh/runs", { token: tokens.viewer });
    expect((runs.body.items as unknown[]).length).toBe(1);
  });

  it("ends a thread's live stream quietly when its client goes", async () => {
    const thread = await call(h, "POST", "/agent/api/agents/threads", { token: tokens.member, body: {} });
    const threadId = thread.body.id as string;
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const client = new AbortController();
      const live = await fetch(`${h.url}/agent/api/agents/threads/${threadId}/events`, {
        headers: { authorization: `Bearer ${tokens.viewer}` },
        signal: client.signal,
      });
      expect(live.status).toBe(200);
      expect(live.headers.get("content-type")).toContain("text/event-stream");
      await vi.waitFor(() => expect(runtime.deps.live.followers(threadId)).toBe(1));
      client.abort();
      await vi.waitFor(() => expect(runtime.deps.live.followers(threadId)).toBe(0));
      await new Promise((r) => setTimeout(r, 200));
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it("tells the runtime whether a chat message's caller may change the agent, never the caller's own say", async () => {
    // The runtime's side (tools offered by this header) is tested in the runtime's settings tests;
    // here a listener in its place records what the gateway sends.
    const seen: Array<{ path: string; manage: string | undefined }> = [];
    const recorder = createServer((req, res) => {
      seen.push({ path: req.url ?? "", manage: req.headers[AGENT_MANAGE_HEADER] as string | undefined });
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    });
    await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
    const target = h.gateway.agent.target as { url: string; projectId: string };
    h.gateway.agent.connect({
      url: `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`,
      projectId: target.projectId,
    });
    try {
      const post = (token: string) =>
        call(h, "POST", "/agent/api/agents/threads/thr_1/messages?stream=false", {
          token,
          body: { text: "turn verbose on" },
          headers: { [AGENT_MANAGE_HEADER]: "true" },
        });
      // The owner's token restricted to chatting may chat, and no more than its scopes.
      const orgId = (await call(h, "GET", "/v1/projects/" + target.projectId)).body.orgId as string;
      const scoped = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, {
        body: { name: "chat only", scopes: ["agent:read", "agent:chat"] },
      });
      expect(scoped.status).toBe(201);
      expect((await post(tokens.member)).status).toBe(200);
      expect((await post(tokens.admin)).status).toBe(200);
      expect((await post(scoped.body.token as string)).status).toBe(200);
      expect((await call(h, "GET", "/agent/api/agents/profile", { token: tokens.viewer })).status).toBe(200);
      const messages = "/agents/threads/thr_1/messages?stream=false";
      expect(seen).toEqual([
        { path: messages, manage: "false" },
        { path: messages, manage: "true" },
        { path: messages, manage: "false" },
        { path: "/agents/profile", manage: undefined },
      ]);
    } finally {
      h.gateway.agent.connect(target);
      await new Promise((resolve) => recorder.close(resolve));
    }
  });

  it("cuts a chunked webhook body off at the limit instead of reading it whole", async () => {
    // Senders need no token here, so the gateway must not buffer what they stream before refusing it.
    let pulled = 0;
    const total = 256 * 1024 * 1024;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += 1024 * 1024;
        controller.enqueue(new Uint8Array(1024 * 1024).fill(0x61));
      },
    });
    const res = await fetch(`${h.url}/agent/webhooks/gh`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(((await res.json()) as { type: string }).type).toMatch(/payload-too-large$/);
    expect(pulled).toBeLessThan(64 * 1024 * 1024);
  });

  it("takes the console's session on the API: same origin, and its CSRF token on a change", async () => {
    const opened = await call(h, "POST", "/v1/auth/sessions", { token: tokens.admin, headers: { origin: h.url } });
    expect(opened.status).toBe(201);
    const cookie = /^([^;]+)/.exec(opened.headers.get("set-cookie") ?? "")![1]!;
    const csrf = opened.body.csrfToken as string;
    const asBrowser = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
      call(h, method, path, { token: null, headers: { cookie, ...headers }, ...(body ? { body } : {}) });

    const read = await asBrowser("GET", "/agent/api/agents/profile", { "sec-fetch-site": "same-origin" });
    expect(read.status).toBe(200);
    const change = { verbose: false };
    const noCsrf = await asBrowser("PATCH", "/agent/api/agents/verbose", { origin: h.url }, change);
    expect(noCsrf.status).toBe(403);
    expect(String(noCsrf.body.detail)).toContain("CSRF");
    const crossSite = await asBrowser(
      "PATCH",
      "/agent/api/agents/verbose",
      { origin: "http://evil.test", "x-csrf-token": csrf },
      change,
    );
    expect(crossSite.status).toBe(403);
    const crossSiteRead = await asBrowser("GET", "/agent/api/agents/profile", { "sec-fetch-site": "cross-site" });
    expect(crossSiteRead.status).toBe(403);
    const done = await asBrowser("PATCH", "/agent/api/agents/verbose", { origin: h.url, "x-csrf-token": csrf }, change);
    expect(done.status).toBe(200);
    // The cookie is the gateway's: the runtime never sees it.
    expect(done.body.verbose).toBe(false);
  });

  it.skipIf(!requireChromium().available)(
    "the web UI at /agent/ exchanges a pasted token for a session, keeps no token, and works through the gateway",
    async () => {
      expect(await ensureWebAssets()).toBe(true);
      const browser = await launchChromium();
      try {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`${h.url}/agent/#/profile`);
        await page.getByLabel("API token").fill("apl_not_a_token");
        await page.getByRole("button", { name: "Continue" }).click();
        await page.getByRole("alert").filter({ hasText: "did not accept" }).waitFor();
        await page.getByLabel("API token").fill(tokens.viewer);
        await page.getByRole("button", { name: "Continue" }).click();
        await page.getByRole("switch", { name: "Verbose" }).first().waitFor();
        // The token is in no storage a script of the console's origin could read, nor in the URL.
        const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
        expect(stored).not.toContain(tokens.viewer);
        expect(page.url()).not.toContain(tokens.viewer);
        expect((await context.cookies()).find((c) => c.name === "agentplane_session")).toMatchObject({
          httpOnly: true,
        });
        // A reload keeps the session (the console's cookie), without asking again.
        await page.reload();
        await page.getByRole("switch", { name: "Verbose" }).first().waitFor();
        // A viewer reads; the change is refused by the gateway and the page shows why.
        await page.getByRole("switch", { name: "Verbose" }).first().click();
        await page.getByRole("alert").filter({ hasText: "agent:manage" }).first().waitFor();
      } finally {
        await browser.close();
      }
    },
  );
});
