// The all-in-one's /agent/: the control plane assembled in process, the agent runtime started next
// to it by the same launcher `npm start` uses (gateway mode, its own project token), and reached
// only through the gateway, where the token's scopes decide what a caller may do.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { inferenceConfigFromSettings } from "@agentplane/inference-proxy";
import { silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres, type TestDatabase } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREDS, type FakeUpstream, startFakeUpstream } from "../../inference-proxy/test/upstream.ts";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";
import { type LocalRuntime, startLocalRuntime } from "../src/runtime.ts";

const pg = await requirePostgres();
const OWNER = `boot_${randomBytes(24).toString("hex")}`;

describe.skipIf(!pg.available)(`the all-in-one fronts its agent runtime at /agent/${pg.reason}`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agent-aio-"));
  let testDb: TestDatabase;
  let database: Database;
  let platform: Platform;
  let runtime: LocalRuntime;
  let up: FakeUpstream;
  let url: string;
  let orgId: string;
  let projectId: string;

  const call = async (method: string, path: string, token: string | null, body?: unknown) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text.startsWith("{") ? JSON.parse(text) : text) as Record<string, unknown> };
  };
  const mint = async (name: string, scopes: string[], role = "admin") => {
    const created = await call("POST", `/v1/orgs/${orgId}/api-tokens`, OWNER, { name, role, scopes });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.token as string;
  };

  beforeAll(async () => {
    up = await startFakeUpstream();
    testDb = await createTestDatabase("agent_aio");
    database = await openDatabase(testDb.url);
    const rawEnv = {
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENTPLANE_BOOTSTRAP_TOKEN: OWNER,
      // Started below by the launcher itself, as runAllInOne does when it is `on`.
      AGENT_RUNTIME: "off",
      AGENT_RUNTIME_PORT: "0",
      LOG_LEVEL: "silent",
      RATE_LIMIT_PER_MINUTE: "100000",
      CLOUD_A_BEARER_TOKEN: CREDS.bearer,
      CLOUD_A_REGION: "us-east-1",
      CLOUD_A_ENDPOINT_URL: up.url,
      HEARTBEAT_INTERVAL_MINUTES: "0",
    };
    const env = AllInOneEnvSchema.parse(rawEnv);
    platform = await assemblePlatform({
      env,
      dataDir,
      database,
      bus: new MemoryBus(),
      logger: silentLogger(),
      inference: inferenceConfigFromSettings(env),
    });
    url = platform.url.replace("0.0.0.0", "127.0.0.1");
    runtime = await startLocalRuntime({
      env,
      rawEnv,
      dataDir,
      publicUrl: url,
      platform,
      logger: silentLogger(),
    });
    // Its project: `agent` in the installation's first organization, made by the launcher.
    orgId = runtime.identity?.orgId as string;
    projectId = runtime.identity?.projectId as string;
  }, 120_000);

  afterAll(async () => {
    await runtime?.close();
    await platform?.close();
    await database?.close();
    await testDb?.drop();
    await up?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts the runtime on loopback with its own project, and fronts its page and API there", async () => {
    expect(new URL(runtime.url).hostname).toBe("127.0.0.1");
    expect(orgId).toMatch(/^org_/);
    const project = await call("GET", `/v1/projects/${projectId}`, OWNER);
    expect(project.body.name).toBe("agent");
    const page = await fetch(`${url}/agent/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect((await call("GET", "/agent/api/agents/profile", null)).status).toBe(401);
    const owner = await call("GET", "/agent/api/agents/profile", OWNER);
    expect(owner.status).toBe(200);
    expect(owner.body.verbose).toBe(false);
  });

  it("gives each agent scope what it names and nothing more; tokens without them get 403", async () => {
    const read = await mint("agent-read", ["agent:read"]);
    const chat = await mint("agent-chat", ["agent:read", "agent:chat"]);
    const manage = await mint("agent-manage", ["agent:read", "agent:manage"]);
    const unrelated = await mint("projects-only", ["project:read"]);

    const threads = await call("GET", "/agent/api/agents/threads", read);
    expect(threads.status).toBe(200);
    const main = (threads.body.items as Array<{ id: string; main: boolean }>).find((t) => t.main)?.id;
    const say = (token: string, text: string) =>
      call("POST", `/agent/api/agents/threads/${main}/messages?stream=false`, token, { text });
    const setVerbose = (token: string, verbose: boolean) =>
      call("PATCH", "/agent/api/agents/verbose", token, { verbose });

    // agent:read reads only.
    expect((await say(read, "hello")).status).toBe(403);
    expect((await setVerbose(read, true)).status).toBe(403);
    // agent:chat chats (the answer comes from the model behind the control plane), not settings.
    const answered = await say(chat, "hello through the gateway");
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(JSON.stringify(answered.body)).toContain("Hello from upstream");
    expect((await setVerbose(chat, true)).status).toBe(403);
    // agent:manage changes settings and turns the webhook receiver on.
    expect((await setVerbose(manage, true)).status).toBe(200);
    expect((await call("GET", "/agent/api/agents/profile", read)).body.verbose).toBe(true);
    expect((await call("PUT", "/agent/api/agents/webhooks/enabled", manage, { enabled: true })).status).toBe(200);
    // The console's page is another origin to the runtime: the gateway, which took the token, does
    // not pass the browser's Origin on for the runtime to refuse.
    const fromConsole = await fetch(`${url}/agent/api/agents/verbose`, {
      method: "PATCH",
      headers: {
        authorization: `Bearer ${manage}`,
        "content-type": "application/json",
        origin: new URL(url).origin,
        "sec-fetch-site": "same-origin",
      },
      body: JSON.stringify({ verbose: true }),
    });
    expect(fromConsole.status, await fromConsole.clone().text()).toBe(200);

    // Admin tokens, all of them: the scope, not the role, is what is missing.
    for (const token of [unrelated, runtime.identity?.token as string]) {
      expect((await call("GET", "/agent/api/agents/profile", token)).status).toBe(403);
      expect((await say(token, "let me in")).status).toBe(403);
    }
  });

  it("passes webhooks through unauthenticated to the runtime's receiver, and hides the runtime from another org", async () => {
    const manage = await mint("hooks-manage", ["agent:manage"]);
    const created = await call("POST", "/agent/api/agents/webhook-subscriptions", manage, {
      name: "ci",
      deliverOnly: true,
      prompt: "build finished",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await call("POST", "/agent/webhooks/ci", null, { status: "green" })).status).toBe(200);
    expect((await call("POST", "/agent/webhooks/nope", null, {})).status).toBe(404);

    const other = await call("POST", "/v1/orgs", OWNER, { name: "Other Team" });
    const outsider = await call("POST", `/v1/orgs/${other.body.id}/api-tokens`, OWNER, {
      name: "outsider",
      scopes: ["agent:read"],
    });
    expect((await call("GET", "/agent/api/agents/profile", outsider.body.token as string)).status).toBe(404);
  });
});
