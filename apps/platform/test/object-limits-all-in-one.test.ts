import { ConfigError, parseEnv } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AllInOneEnvSchema } from "../src/config.ts";
import { startLimitedAllInOne } from "./limits-all-in-one.ts";
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
  let aio: Awaited<ReturnType<typeof startLimitedAllInOne>> | undefined;
  let kinds: LimitedKind[];

  beforeAll(async () => {
    aio = await startLimitedAllInOne("limits_aio", ALL_LIMITS_SETTING);
    kinds = [...(await limitedKinds(aio.url, aio.owner)), ...(await otherLimitedKinds(aio.url, aio.owner))];
  }, 180_000);

  afterAll(async () => {
    await aio?.close();
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
