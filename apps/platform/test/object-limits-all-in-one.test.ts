import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { ConfigError, parseEnv, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres, type TestDatabase } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";
import { ALL_LIMITS_SETTING, type LimitedKind, limitedKinds, otherLimitedKinds, walkLimit } from "./object-limits.ts";

const pg = await requirePostgres();

describe("OBJECT_LIMITS in the all-in-one launcher's settings", () => {
  it.each([
    ["an unknown kind", "widgets=5", /unknown kind "widgets" \(known: projects, teams, api-tokens/],
    ["a zero", "connectors=0", /"connectors=0" must be <kind>=<n> with n a whole number from 1 to 1000000/],
    ["no number", "policies=many", /"policies=many" must be <kind>=<n>/],
    ["a kind given twice", "teams=5,teams=6", /teams is given twice/],
  ])("refuses %s, naming the variable", (_, value, message) => {
    let error: unknown;
    try {
      parseEnv(AllInOneEnvSchema, { OBJECT_LIMITS: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual(["OBJECT_LIMITS"]);
    expect((error as Error).message).toMatch(/OBJECT_LIMITS: /);
    expect((error as Error).message).toMatch(message);
  });

  it("keeps every default it does not name", () => {
    const env = parseEnv(AllInOneEnvSchema, { OBJECT_LIMITS: " connectors = 7 , api-tokens=9" });
    expect(env.OBJECT_LIMITS).toMatchObject({
      connectors: 7,
      "api-tokens": 9,
      policies: 1000,
      clusters: 100,
      sandboxes: 1000,
      "running-sandboxes": 100,
    });
    expect(parseEnv(AllInOneEnvSchema, {}).OBJECT_LIMITS.connectors).toBe(500);
  });
});

describe.skipIf(!pg.available)(`object limits, all-in-one on Postgres${pg.reason}`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-limits-"));
  const owner = `owner_${randomBytes(24).toString("hex")}`;
  let testDb: TestDatabase;
  let database: Database;
  let platform: Platform;
  let kinds: LimitedKind[];

  beforeAll(async () => {
    testDb = await createTestDatabase("limits_aio");
    // A pool of several connections, so concurrent creates really run side by side.
    database = await openDatabase(testDb.url, { max: 8 });
    const env = AllInOneEnvSchema.parse({
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENTPLANE_BOOTSTRAP_TOKEN: owner,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
      LOG_LEVEL: "silent",
      RATE_LIMIT_PER_MINUTE: "100000",
      OBJECT_LIMITS: ALL_LIMITS_SETTING,
    });
    platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
    const url = platform.url.replace("0.0.0.0", "127.0.0.1");
    kinds = [...(await limitedKinds(url, owner)), ...(await otherLimitedKinds(url, owner))];
  }, 180_000);

  afterAll(async () => {
    await platform?.close();
    await database?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each([
    "connectors",
    "api-tokens",
    "policies",
    "credentials",
    "projects",
    "teams",
    "invitations",
    "bindings",
    "clusters",
    "aws-connections",
    "sandboxes",
  ])(
    "%s: up to the limit, one more is a 409 limit-exceeded, a delete frees a slot, a burst cannot overshoot",
    async (kind) => {
      await walkLimit(kinds.find((k) => k.kind === kind)!);
    },
    60_000,
  );
});
