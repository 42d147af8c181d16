import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres, type TestDatabase } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, it } from "vitest";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";
import { type LimitedKind, walkLimit } from "./object-limits.ts";
import { USER_LIMITS_SETTING, userLimitedKinds } from "./object-limits-per-user.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`object limits per user, all-in-one on Postgres${pg.reason}`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-user-limits-"));
  const owner = `owner_${randomBytes(24).toString("hex")}`;
  let testDb: TestDatabase;
  let database: Database;
  let platform: Platform;
  let kinds: LimitedKind[];

  beforeAll(async () => {
    testDb = await createTestDatabase("limits_user");
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
      OBJECT_LIMITS: USER_LIMITS_SETTING,
    });
    platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
    kinds = await userLimitedKinds(platform.url.replace("0.0.0.0", "127.0.0.1"), owner);
  }, 180_000);

  afterAll(async () => {
    await platform?.close();
    await database?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // api-tokens here: an organization's tokens minted by device sign-ins approved with a token bound to it.
  it.each(["organizations", "sessions", "personal-api-tokens", "api-tokens"])(
    "%s: up to the limit, one more is refused with limit-exceeded, a delete frees a slot, a burst cannot overshoot",
    async (kind) => {
      await walkLimit(kinds.find((k) => k.kind === kind)!);
    },
    60_000,
  );
});
