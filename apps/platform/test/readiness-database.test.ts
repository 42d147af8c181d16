import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAuditService } from "@agentplane/audit-svc";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { createSandboxService } from "@agentplane/sandbox-svc";
import { generateInternalKeys, silentLogger } from "@agentplane/service-kit";
import { createTenancyService } from "@agentplane/tenancy-svc";
import { describe, expect, it } from "vitest";

async function ready(service: { fetch: (r: Request) => Response | Promise<Response> }) {
  const res = await service.fetch(new Request("http://svc/health/ready"));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("readiness of a stopped database", () => {
  it("tenancy, audit and sandbox answer 503 on /health/ready naming the database, while /health/live stays 200", async () => {
    const database = await openDatabase("pglite://memory");
    const bus = new MemoryBus();
    const keys = await generateInternalKeys();
    const logger = silentLogger();
    const dataDir = mkdtempSync(join(tmpdir(), "readiness-"));
    const tenancy = await createTenancyService({
      database,
      bus,
      keys,
      logger,
      config: { secretKey: randomBytes(32), publicUrl: "http://localhost" },
    });
    const audit = await createAuditService({
      database,
      bus,
      keys,
      logger,
      authorizer: tenancy.authorizer,
      config: { maintenance: false },
    });
    const sandbox = await createSandboxService({
      database,
      bus,
      keys,
      logger,
      authorizer: tenancy.authorizer,
      config: { dataDir, isolation: "none" },
    });
    try {
      for (const service of [tenancy, audit, sandbox]) {
        expect((await ready(service)).status).toBe(200);
      }
      expect((await ready(sandbox)).body.checks).toEqual({ database: "up", bus: "up", driver: "up" });

      await database.close();
      for (const service of [tenancy, audit, sandbox]) {
        const r = await ready(service);
        expect(r.status, service.name).toBe(503);
        expect(r.body).toMatchObject({ status: "unavailable", checks: { database: "down" } });
        expect(await service.ready()).toBe(false);
        expect((await service.fetch(new Request("http://svc/health/live"))).status).toBe(200);
        const summary = await service.fetch(new Request("http://svc/health"));
        expect(summary.status).toBe(503);
        expect(await summary.json()).toMatchObject({ live: true, ready: false, checks: { database: "down" } });
      }
    } finally {
      await Promise.allSettled([tenancy.close(), audit.close(), sandbox.close()]);
      await bus.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
    // Three services migrate one PGlite on a loaded machine.
  }, 180_000);
});
