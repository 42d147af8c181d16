import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateInternalKeys } from "@agentplane/service-kit";
import { createTestDatabase, OwnRedis, requirePostgres, requireRedis, type TestDatabase } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort, type Spawned, spawnNode, waitForHealth } from "../../../tests/e2e/processes.ts";
import { attacksOn, runAttacks, slowServer } from "./reset-attacks.ts";

const pg = await requirePostgres();
const redis = await requireRedis();
const LAUNCHER = "apps/platform/src/main.ts";
const INGRESS = "sbx.localhost";

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe.skipIf(!pg.available || !redis.available)(
  `distributed: reset connections, then readiness of a stopped bus and a dead upstream${pg.reason}${redis.reason}`,
  () => {
    let database: TestDatabase;
    const bus = new OwnRedis();
    const dataDir = mkdtempSync(join(tmpdir(), "robustness-distributed-"));
    const processes: Record<string, Spawned> = {};
    const urls: Record<string, string> = {};
    let projectId = "";
    let adminToken = "";
    let sandboxId = "";
    let ingressHost = "";

    beforeAll(async () => {
      database = await createTestDatabase("robust");
      await bus.start();
      const keys = await generateInternalKeys();
      const bootstrapToken = `boot_${randomBytes(24).toString("hex")}`;
      for (const name of ["tenancy", "sandbox", "audit", "gateway"]) {
        urls[name] = `http://127.0.0.1:${await freePort()}`;
      }
      const shared = {
        DATABASE_URL: database.url,
        REDIS_URL: bus.url,
        INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
        AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
        TENANCY_URL: urls.tenancy!,
        PUBLIC_URL: urls.gateway!,
        HOST: "127.0.0.1",
      };
      const start = (name: string, target: string, env: Record<string, string>) => {
        processes[name] = spawnNode(LAUNCHER, [`--target=${target}`], {
          ...shared,
          PORT: new URL(urls[name]!).port,
          ...env,
        });
      };
      start("tenancy", "tenancy", { AGENTPLANE_BOOTSTRAP_TOKEN: bootstrapToken });
      await waitForHealth(urls.tenancy!, 150_000);
      start("sandbox", "sandbox", {
        SANDBOX_DATA_DIR: dataDir,
        AGENTPLANE_API_URL: urls.gateway!,
        SANDBOX_LOCAL_ISOLATION: "none",
        SANDBOX_INGRESS_HOST: INGRESS,
      });
      start("audit", "audit", {});
      await Promise.all([waitForHealth(urls.sandbox!, 150_000), waitForHealth(urls.audit!, 150_000)]);
      start("gateway", "gateway", {
        SANDBOX_URL: urls.sandbox!,
        AUDIT_URL: urls.audit!,
        SANDBOX_INGRESS_HOST: INGRESS,
      });
      await waitForHealth(urls.gateway!, 150_000);

      const owner = (method: string, path: string, body: unknown) =>
        json(`${urls.gateway}${path}`, {
          method,
          headers: { authorization: `Bearer ${bootstrapToken}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const org = await owner("POST", "/v1/orgs", { name: "Robust" });
      expect(org.status).toBe(201);
      const project = await owner("POST", `/v1/orgs/${org.body.id}/projects`, { name: "storm" });
      projectId = String(project.body.id);
      adminToken = String(
        (await owner("POST", `/v1/orgs/${org.body.id}/api-tokens`, { name: "a", role: "admin" })).body.token,
      );
      const port = await freePort();
      const slug = `web-${randomBytes(3).toString("hex")}`;
      const sbx = await json(`${urls.gateway}/v1/projects/${projectId}/sandboxes`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({
          name: "web",
          slug,
          start: true,
          command: ["node", "-e", slowServer(port)],
          ports: [{ port, visibility: "public" }],
        }),
      });
      expect(sbx.status).toBe(201);
      sandboxId = String(sbx.body.id);
      await vi.waitFor(
        async () => {
          const got = await json(`${urls.gateway}/v1/projects/${projectId}/sandboxes/${sandboxId}`, {
            headers: { authorization: `Bearer ${adminToken}` },
          });
          if (got.body.state !== "running") throw new Error(`sandbox ${String(got.body.state)}`);
        },
        { timeout: 30_000, interval: 200 },
      );
      ingressHost = `${port}-${slug}.${INGRESS}`;
      // Four processes compile and migrate on start: slow on a loaded 2-core machine.
    }, 400_000);

    afterAll(async () => {
      await Promise.all(Object.values(processes).map((p) => p.stop()));
      await bus.stop();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("survives reset connections on every kind of route, at the gateway and at the services", async () => {
      const target = { token: adminToken, projectId, sandboxId };
      expect(await runAttacks(urls.gateway!, attacksOn({ ...target, url: urls.gateway!, ingressHost }))).toEqual([]);
      // The services' own ports: upgrades without an identity, requests cut short.
      for (const name of ["sandbox", "tenancy", "audit"]) {
        const attacks = attacksOn({ ...target, url: urls[name]! }).filter((a) => !a.after);
        await runAttacks(urls[name]!, attacks, 1);
      }
      // Asserts that nothing happens: a reset that lands while a service works on it surfaces (as a
      // crash or a counted fault) a moment later, so the health is read after a short wait.
      await new Promise((r) => setTimeout(r, 300));
      for (const [name, p] of Object.entries(processes)) {
        expect(p.child.exitCode, `${name} exited:\n${p.output()}`).toBeNull();
        const health = await json(`${urls[name]}/health`);
        expect(health.status, name).toBe(200);
        expect(health.body.process, `${name}:\n${p.output()}`).toEqual({
          uncaughtExceptions: 0,
          unhandledRejections: 0,
        });
      }
    });

    it("reports a stopped bus and a dead upstream as not ready", async () => {
      expect((await json(`${urls.gateway}/health/ready`)).status).toBe(200);
      await bus.stop();
      // The services notice the lost connection within a moment.
      await expect
        .poll(async () => (await json(`${urls.sandbox}/health/ready`)).body, { timeout: 15_000, interval: 250 })
        .toMatchObject({ status: "unavailable", checks: { database: "up", bus: "down", driver: "up" } });
      expect(await json(`${urls.audit}/health/ready`)).toMatchObject({
        status: 503,
        body: { checks: { database: "up", bus: "down" } },
      });
      // Tenancy keeps serving (its events wait in the outbox) and says the bus is down.
      expect(await json(`${urls.tenancy}/health/ready`)).toMatchObject({
        status: 200,
        body: { checks: { database: "up", bus: "down" } },
      });
      const gateway = await json(`${urls.gateway}/health/ready`);
      expect(gateway).toMatchObject({ status: 503, body: { services: { sandbox: "unavailable", tenancy: "ready" } } });
      expect((await json(`${urls.gateway}/health/live`)).status).toBe(200);

      // The rate limiter's store is that Redis too: requests pass, counted and reported.
      const me = await json(`${urls.gateway}/v1/auth/me`, { headers: { authorization: `Bearer ${adminToken}` } });
      expect(me.status).toBe(200);
      // Below half the limit the hit is answered locally and sent with the next flush (50 ms), so
      // the outage shows once that send fails.
      await expect
        .poll(async () => (await json(`${urls.gateway}/health`)).body.rateLimiter, { timeout: 10_000, interval: 50 })
        .toMatchObject({ failingOpen: true, outages: 1 });
      const summary = await json(`${urls.gateway}/health`);
      expect((summary.body.rateLimiter as { failedOpen: number }).failedOpen).toBeGreaterThan(0);
      expect(summary.body.dependencies).toMatchObject({ sandbox: { bus: "down" } });
      expect(processes.gateway!.output()).toMatch(/rate limiter: Redis unreachable/);

      await bus.start();
      await expect
        .poll(async () => (await json(`${urls.gateway}/health/ready`)).status, { timeout: 20_000, interval: 250 })
        .toBe(200);

      // A service process gone: the gateway is alive but not ready, and names it.
      await processes.audit!.stop();
      const dead = await json(`${urls.gateway}/health/ready`);
      expect(dead).toMatchObject({ status: 503, body: { services: { audit: "unavailable", sandbox: "ready" } } });
      expect((await json(`${urls.gateway}/health/live`)).status).toBe(200);
    });
  },
);
