import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, type Spawned, spawnNode } from "./processes.ts";
import { client, newcomerScenario } from "./scenario.ts";

const LAUNCHER = "apps/platform/src/main.ts";
/** As `npm start` runs the launcher (scripts/bootstrap.mjs) and as the image does. */
const START_FLAGS = ["--max-semi-space-size=2", "--liftoff-only"];

describe("all-in-one launcher (npm start) on a temporary data dir", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-e2e-"));
  let platform: Spawned | undefined;
  let baseUrl = "";
  let ownerToken = "";
  let scenario: Awaited<ReturnType<typeof newcomerScenario>>;

  async function start(port: number): Promise<Spawned> {
    const env = { PORT: String(port), AGENTPLANE_DATA_DIR: dataDir, AGENT_RUNTIME: "off" };
    const p = spawnNode(LAUNCHER, [], env, START_FLAGS);
    await p.waitFor(/Health\s+http:\/\/\S+\/health/);
    return p;
  }

  afterAll(async () => {
    await platform?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts, prints the URLs and a setup code, and serves health, docs and the OpenAPI document", async () => {
    const port = await freePort();
    platform = await start(port);
    baseUrl = `http://127.0.0.1:${port}`;
    expect(platform.output()).toMatch(/setup code: \S+/);
    // A first start initialises the embedded database in a child process (PGlite's memory only
    // grows) and collects its start's garbage once: it idles like a restart, about 250 MiB (about
    // 630 MiB with neither, 340 with the collection alone).
    const status = readFileSync(`/proc/${platform.child.pid}/status`, "utf8");
    const rssMiB = Number(status.match(/VmRSS:\s+(\d+)/)?.[1]) / 1024;
    expect(rssMiB).toBeLessThan(320);
    const health = await fetch(`${baseUrl}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { services: Record<string, string> }).services.tenancy).toBe("ready");
    const docs = await fetch(`${baseUrl}/docs`);
    expect(await docs.text()).toContain("/v1/openapi.json");
    const openapi = await fetch(`${baseUrl}/v1/openapi.json`);
    expect(((await openapi.json()) as { openapi: string }).openapi).toBe("3.1.0");
    // Run as root, its local sandboxes are their own host user's, whose bwrap must search the
    // data dir to reach their workspaces: others may search it, and all but those is closed.
    if (process.getuid?.() === 0) {
      expect(statSync(dataDir).mode & 0o777).toBe(0o711);
      for (const entry of readdirSync(dataDir)) {
        if (entry !== "sandboxes")
          expect({ entry, others: statSync(join(dataDir, entry)).mode & 0o077 }).toEqual({ entry, others: 0 });
      }
      expect(platform.output()).not.toContain("sandboxes run as the service's root user");
    }
  });

  it("activates through the device flow with the setup code and returns the owner token once", async () => {
    const setupCode = platform!.output().match(/setup code: (\S+)/)![1]!;
    const call = client(baseUrl);
    const session = await call<{ sessionId: string; userCode: string; interval: number }>(
      "POST",
      "/v1/installation/activation",
    );
    expect(session.status).toBe(201);
    const first = await call<{ status: string }>("GET", `/v1/installation/activation/${session.body.sessionId}`);
    expect(first.body.status).toBe("pending");
    const fast = await call<{ status: string }>("GET", `/v1/installation/activation/${session.body.sessionId}`);
    expect(fast.body.status).toBe("slow_down");

    const page = await fetch(`${baseUrl}/activate`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ userCode: session.body.userCode, setupCode }).toString(),
    });
    expect(page.status).toBe(200);

    await new Promise((r) => setTimeout(r, (session.body.interval + 1) * 1000));
    const approved = await call<{ status: string; token?: string }>(
      "GET",
      `/v1/installation/activation/${session.body.sessionId}`,
    );
    expect(approved.body.status).toBe("approved");
    expect(approved.body.token).toMatch(/^apl_/);
    ownerToken = approved.body.token!;

    await new Promise((r) => setTimeout(r, (session.body.interval + 1) * 1000));
    const again = await call<{ status: string; token?: string }>(
      "GET",
      `/v1/installation/activation/${session.body.sessionId}`,
    );
    expect(again.body.status).toBe("approved");
    expect(again.body.token).toBeUndefined();
    expect((await call("POST", "/v1/installation/activation")).status).toBe(409);
  });

  it("lets the owner create an organization, a project, rotate keys and use a new API token", async () => {
    scenario = await newcomerScenario(baseUrl, ownerToken);
  });

  it("keeps the data across a restart", async () => {
    await platform!.stop();
    const port = await freePort();
    platform = await start(port);
    baseUrl = `http://127.0.0.1:${port}`;
    expect(platform.output()).not.toMatch(/setup code:/);
    const call = client(baseUrl, scenario.apiToken);
    const projects = await call<{ items: { id: string }[] }>("GET", `/v1/orgs/${scenario.orgId}/projects`);
    expect(projects.status).toBe(200);
    expect(projects.body.items.map((p) => p.id)).toContain(scenario.projectId);
    const installation = await client(baseUrl)<{ status: string }>("GET", "/v1/installation");
    expect(installation.body.status).toBe("activated");
  });
});
