// A deployable that cannot start says why in one line naming what to do, and exits with code 1:
// a bad key, a bad setting, a database server out of reach, a port already taken. (A database
// that does not exist is created: the distributed recipe starts from an empty server.)

import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:net";
import { generateInternalKeys } from "@agentplane/service-kit";
import { requirePostgres, requireRedis, TEST_POSTGRES_URL, TEST_REDIS_URL } from "@agentplane/testkit";
import { describe, expect, it } from "vitest";
import { freePort, spawnNode } from "./processes.ts";

const LAUNCHER = "apps/platform/src/main.ts";
const pg = await requirePostgres();
const redis = await requireRedis();
const keys = await generateInternalKeys();

const base = {
  DATABASE_URL: TEST_POSTGRES_URL,
  REDIS_URL: TEST_REDIS_URL,
  INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
  AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
  TENANCY_URL: "http://127.0.0.1:9",
  AUDIT_URL: "http://127.0.0.1:9",
  PORT: "0",
};

/** Runs one target to its exit: the exit code and what it wrote. */
async function start(target: string, env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  const proc = spawnNode(LAUNCHER, [`--target=${target}`], { ...base, ...env });
  const [code] = (await once(proc.child, "exit")) as [number | null];
  const lines = proc
    .output()
    .split("\n")
    .filter((line) => line.trim() && !line.startsWith("[agentplane]"));
  return { code, lines };
}

describe.skipIf(!pg.available || !redis.available)(`start-up failures${pg.reason}${redis.reason}`, () => {
  it("a key that is not an Ed25519 JSON Web Key names the variable and how to make one", async () => {
    const { code, lines } = await start("tenancy", { INTERNAL_IDENTITY_PRIVATE_KEY: '{"kty":"OKP"' });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^agentplane tenancy: .*INTERNAL_IDENTITY_PRIVATE_KEY.*platform keys/);
  });

  it("a bad price table names PRICE_TABLE_JSON before anything connects", async () => {
    const { code, lines } = await start("inference", { PRICE_TABLE_JSON: '{"m": {"input": "cheap"}}' });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^agentplane inference: .*PRICE_TABLE_JSON/);
  });

  it("a boolean setting with an unknown value names the variable and the values it takes", async () => {
    const { code, lines } = await start("all", { AGENT_RUNTIME: "enabled" });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      "agentplane: invalid configuration: AGENT_RUNTIME: must be one of true, false, 1, 0, yes, no, on, off",
    );
  });

  it("a service's boolean setting is checked the same way when it runs alone", async () => {
    const { code, lines } = await start("sandbox", {
      SANDBOX_DRIVER: "kubernetes",
      SANDBOX_K8S_NAMESPACE: "agentplane-sandboxes",
      SANDBOX_K8S_DIAL_POD_IP: "ture",
    });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^agentplane sandbox: .*SANDBOX_K8S_DIAL_POD_IP: must be one of true, false, 1, 0/);
  });

  it("a bad object limit stops every service that enforces limits, naming OBJECT_LIMITS", async () => {
    const [aio, ...alone] = await Promise.all(
      ["all", "tenancy", "governance", "connections", "sandbox"].map((target) =>
        start(target, { OBJECT_LIMITS: "connectors=0" }),
      ),
    );
    const problem = 'OBJECT_LIMITS: "connectors=0" must be <kind>=<n> with n a whole number from 1 to 1000000';
    expect(aio!.code).toBe(1);
    expect(aio!.lines).toEqual([`agentplane: invalid configuration: ${problem}`]);
    for (const [i, target] of ["tenancy", "governance", "connections", "sandbox"].entries()) {
      expect(alone[i]!.code, target).toBe(1);
      expect(alone[i]!.lines).toHaveLength(1);
      expect(alone[i]!.lines[0]).toMatch(new RegExp(`^agentplane ${target}: .*${problem.replace(/[()<>]/g, "\\$&")}`));
    }
    const unknown = await start("governance", { OBJECT_LIMITS: "widgets=5" });
    expect(unknown.code).toBe(1);
    expect(unknown.lines[0]).toMatch(
      /^agentplane governance: .*OBJECT_LIMITS: unknown kind "widgets" \(known: projects, /,
    );
  });

  it("a database server that cannot be reached is named, with what to check", async () => {
    const closed = new URL(TEST_POSTGRES_URL);
    closed.port = String(await freePort());
    const { code, lines } = await start("tenancy", { DATABASE_URL: closed.toString() });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^agentplane tenancy: cannot reach Postgres at 127\\.0\\.0\\.1:${closed.port} `),
    );
    expect(lines[0]).toMatch(/Is the server running and the URL right\?$/);
  });

  it("a port already taken is named, with what to do", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const { code, lines } = await start("tenancy", { PORT: String(port), HOST: "127.0.0.1" });
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        `agentplane tenancy: port ${port} is already in use: stop what listens there or set PORT to a free port`,
      );
    } finally {
      taken.close();
    }
  });
});
