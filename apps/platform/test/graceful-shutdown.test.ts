// A rolling deploy stops a process with SIGTERM while requests are in flight and while Kubernetes is
// still routing new ones to it. The launcher, started as a real process, keeps serving for
// SHUTDOWN_DELAY_MS (its /health/ready answering 503), then waits up to SHUTDOWN_DRAIN_MS for what
// is in flight before it cuts it and exits; a second signal exits at once.
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateInternalKeys } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { callApi, freePort, type Spawned, spawnNode, waitForHealth } from "../../../tests/e2e/processes.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "../../inference-proxy/test/upstream.ts";

const pg = await requirePostgres();
const LAUNCHER = "apps/platform/src/main.ts";
const OWNER = `owner-${"d".repeat(40)}`;
const HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
const STREAM = `/v1/llm/cloud-a/us-east-1/model/${encodeURIComponent(HAIKU)}/invoke-with-response-stream`;
const DELAY_MS = 1_000;
const DRAIN_MS = 1_500;
/** A drain limit no test reaches, so "left early" is told apart from "left at the limit" on a loaded machine. */
const LONG_DRAIN_MS = 60_000;

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const alive = (p: Spawned) => p.child.exitCode === null && p.child.signalCode === null;

describe("graceful shutdown of the launcher", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "graceful-shutdown-"));
  let up: FakeUpstream;
  let token = "";
  let running: Spawned | undefined;
  let first: { process: Spawned; url: string };

  async function start(drainMs = DRAIN_MS): Promise<{ process: Spawned; url: string }> {
    const url = `http://127.0.0.1:${await freePort()}`;
    running = spawnNode(LAUNCHER, [], {
      PORT: new URL(url).port,
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
      AGENTPLANE_BOOTSTRAP_TOKEN: OWNER,
      CLOUD_A_BEARER_TOKEN: CREDS.bearer,
      CLOUD_A_ENDPOINT_URL: up.url,
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
      SHUTDOWN_DRAIN_MS: String(drainMs),
    });
    await waitForHealth(url, 120_000);
    return { process: running, url };
  }

  /** A model stream the upstream holds open after its first part, until `up.release()`. */
  async function heldStream(url: string): Promise<Response> {
    up.hold = true;
    const res = await fetch(`${url}${STREAM}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        anthropic_version: "bedrock-2023-05-31",
        max_tokens: 20,
        messages: [{ role: "user", content: "say hi" }],
      }),
    });
    expect(res.status).toBe(200);
    await until(() => up.heldNow, "the upstream to hold the stream");
    return res;
  }

  beforeAll(async () => {
    up = await startFakeUpstream();
    // The project's token, made once: the data dir (and its database) is the same for every start.
    first = await start(LONG_DRAIN_MS);
    const { url } = first;
    const org = await callApi<{ id: string }>(url, OWNER, "POST", "/v1/orgs", { name: "Drained" });
    const project = await callApi<{ id: string }>(url, OWNER, "POST", `/v1/orgs/${org.body.id}/projects`, {
      name: "agents",
    });
    const created = await callApi<{ token: string }>(url, OWNER, "POST", `/v1/orgs/${org.body.id}/api-tokens`, {
      name: "agent",
      role: "admin",
      projectId: project.body.id,
    });
    token = created.body.token;
    expect(token).toBeTruthy();
  }, 180_000);

  afterEach(async () => {
    up.hold = false;
    up.release();
    await running?.stop("SIGKILL");
  });

  afterAll(async () => {
    await up?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("finishes a request in flight, reports not ready while still serving, then exits", async () => {
    const { process, url } = first;
    const stream = await heldStream(url);
    const signalled = Date.now();
    process.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, DELAY_MS / 4));

    // The delay: not ready, with a problem saying why, while every other route still answers.
    const ready = await fetch(`${url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get("content-type")).toContain("application/problem+json");
    expect(await ready.json()).toMatchObject({ status: 503, detail: "Shutting down", shuttingDown: true });
    const live = await fetch(`${url}/health/live`);
    expect(live.status).toBe(200);
    // Answered with `Connection: close`: a keep-alive client takes its next request elsewhere.
    expect(live.headers.get("connection")).toBe("close");
    const orgs = await callApi(url, token, "GET", "/v1/orgs");
    expect(orgs.status).toBe(200);
    expect(alive(process)).toBe(true);

    // Past the delay: new connections are refused, the held stream still runs to its end.
    await new Promise((r) => setTimeout(r, DELAY_MS - (Date.now() - signalled) + 200));
    await expect(fetch(`${url}/health/live`)).rejects.toThrow();
    expect(alive(process)).toBe(true);
    up.hold = false;
    up.release();
    // Every event of the stream arrived, its last one included.
    const frames = Buffer.from(await stream.arrayBuffer()).toString("latin1");
    const events = [...frames.matchAll(/"bytes":"([^"]+)"/g)].map((m) => Buffer.from(m[1]!, "base64").toString());
    expect(events.at(-1)).toContain("message_stop");
    const [code] = (await once(process.child, "exit")) as [number | null];
    expect(code).toBe(0);
    // It did not wait for the drain limit once nothing was in flight.
    expect(Date.now() - signalled).toBeLessThan(DELAY_MS + 10_000);
  }, 180_000);

  it("cuts what is still in flight at the drain limit and exits within delay + drain", async () => {
    const { process, url } = await start();
    const stream = await heldStream(url);
    const signalled = Date.now();
    const read = stream.arrayBuffer().then(
      () => "completed",
      () => "cut",
    );
    process.child.kill("SIGTERM");
    const [code] = (await once(process.child, "exit")) as [number | null];
    const elapsed = Date.now() - signalled;
    expect(await read).toBe("cut");
    expect(code).toBe(0);
    expect(elapsed).toBeGreaterThanOrEqual(DELAY_MS + DRAIN_MS - 100);
    expect(elapsed).toBeLessThan(DELAY_MS + DRAIN_MS + 3_000);
    expect(process.output()).toMatch(/requests still in flight at the drain limit were cut/);
  }, 180_000);

  it("exits at once on a second signal", async () => {
    const { process, url } = await start(LONG_DRAIN_MS);
    await heldStream(url);
    process.child.kill("SIGINT");
    await new Promise((r) => setTimeout(r, DELAY_MS / 2));
    expect(alive(process)).toBe(true);
    const again = Date.now();
    process.child.kill("SIGINT");
    const [code] = (await once(process.child, "exit")) as [number | null];
    expect(code).toBe(1);
    expect(Date.now() - again).toBeLessThan(5_000);
  }, 180_000);
});

describe.skipIf(!pg.available)(`graceful shutdown of a distributed service${pg.reason}`, () => {
  it("reports not ready while still serving for the delay, then exits", async () => {
    const database = await createTestDatabase("drain");
    const keys = await generateInternalKeys();
    const url = `http://127.0.0.1:${await freePort()}`;
    const audit = spawnNode(LAUNCHER, ["--target=audit"], {
      PORT: new URL(url).port,
      HOST: "127.0.0.1",
      DATABASE_URL: database.url,
      INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
      TENANCY_URL: "http://127.0.0.1:9",
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
    });
    try {
      await waitForHealth(url, 120_000);
      const signalled = Date.now();
      audit.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, DELAY_MS / 4));
      const ready = await fetch(`${url}/health/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ detail: "Shutting down" });
      const live = await fetch(`${url}/health/live`);
      expect(live.status).toBe(200);
      expect(live.headers.get("connection")).toBe("close");
      const [code] = (await once(audit.child, "exit")) as [number | null];
      expect(code).toBe(0);
      // Nothing was in flight: it left right after the delay, not at the (default, 20 s) drain limit.
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(DELAY_MS - 100);
      expect(Date.now() - signalled).toBeLessThan(DELAY_MS + 5_000);
    } finally {
      await audit.stop("SIGKILL");
      await database.drop();
    }
  }, 180_000);
});
