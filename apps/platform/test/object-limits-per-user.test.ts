import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startLimitedAllInOne } from "./limits-all-in-one.ts";
import { type LimitedKind, walkLimit } from "./object-limits.ts";
import { USER_LIMITS_SETTING, userLimitedKinds } from "./object-limits-per-user.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`object limits per user, all-in-one on Postgres${pg.reason}`, () => {
  let aio: Awaited<ReturnType<typeof startLimitedAllInOne>> | undefined;
  let kinds: LimitedKind[];

  beforeAll(async () => {
    aio = await startLimitedAllInOne("limits_user", USER_LIMITS_SETTING);
    kinds = await userLimitedKinds(aio.url, aio.owner);
  }, 180_000);

  afterAll(async () => {
    await aio?.close();
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
