import { randomBytes } from "node:crypto";
import { generateInternalKeys } from "@agentplane/service-kit";
import { createTestDatabase, OwnRedis, requirePostgres, requireRedis, type TestDatabase } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, it } from "vitest";
import { freePort, type Spawned, spawnNode, waitForHealth } from "../../../tests/e2e/processes.ts";
import { LIMIT, LIMITS_SETTING, type LimitedKind, limitedKinds, walkLimit } from "./object-limits.ts";
import { userLimitedKinds } from "./object-limits-per-user.ts";

const pg = await requirePostgres();
const redis = await requireRedis();
const LAUNCHER = "apps/platform/src/main.ts";
const SERVICES = { tenancy: "TENANCY_URL", governance: "GOVERNANCE_URL", connections: "CONNECTIONS_URL" } as const;

describe.skipIf(!pg.available || !redis.available)(
  `object limits, distributed: tenancy, governance, connections and the gateway as their own processes${pg.reason}${redis.reason}`,
  () => {
    let database: TestDatabase;
    const bus = new OwnRedis();
    let launcher: Spawned | undefined;
    let kinds: LimitedKind[];

    beforeAll(async () => {
      database = await createTestDatabase("limits_dist");
      await bus.start();
      const keys = await generateInternalKeys();
      const owner = `boot_${randomBytes(24).toString("hex")}`;
      const urls: Record<string, string> = {};
      for (const variable of Object.values(SERVICES)) urls[variable] = `http://127.0.0.1:${await freePort()}`;
      const gatewayUrl = `http://127.0.0.1:${await freePort()}`;
      // Each service reads OBJECT_LIMITS from its own environment, as its deployable does.
      launcher = spawnNode(LAUNCHER, [`--target=${[...Object.keys(SERVICES), "gateway"].join(",")}`], {
        PORT: new URL(gatewayUrl).port,
        HOST: "127.0.0.1",
        DATABASE_URL: database.url,
        REDIS_URL: bus.url,
        INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
        AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
        AGENTPLANE_BOOTSTRAP_TOKEN: owner,
        ...urls,
        PUBLIC_URL: gatewayUrl,
        RATE_LIMIT_PER_MINUTE: "100000",
        OBJECT_LIMITS: `${LIMITS_SETTING},sessions=${LIMIT},personal-api-tokens=${LIMIT}`,
      });
      try {
        for (const url of [...Object.values(urls), gatewayUrl]) await waitForHealth(url, 200_000);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${launcher.output()}`);
      }
      const perUser = (await userLimitedKinds(gatewayUrl, owner)).filter((k) =>
        ["sessions", "personal-api-tokens"].includes(k.kind),
      );
      kinds = [...(await limitedKinds(gatewayUrl, owner)), ...perUser];
    }, 300_000);

    afterAll(async () => {
      await launcher?.stop();
      await database?.drop();
      await bus.stop();
    });

    it.each(["connectors", "api-tokens", "policies", "credentials", "sessions", "personal-api-tokens"])(
      "%s: up to the limit, one more is a 409 limit-exceeded, a delete frees a slot, a burst cannot overshoot",
      async (kind) => {
        await walkLimit(kinds.find((k) => k.kind === kind)!);
      },
      60_000,
    );
  },
);
