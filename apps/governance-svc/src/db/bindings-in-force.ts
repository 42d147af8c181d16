import type { Kysely } from "kysely";
import type { GovernanceDb } from "./schema.ts";

/**
 * Bindings (`b`) with their policy (`p`) and the version each resolves to (`v`): the pinned one,
 * else the policy's latest. What decisions load and what the bound on an organization counts.
 */
export function bindingsInForce(db: Kysely<GovernanceDb>) {
  return db
    .selectFrom("bindings as b")
    .innerJoin("policies as p", "p.id", "b.policy_id")
    .innerJoin("policy_versions as v", (join) =>
      join
        .onRef("v.policy_id", "=", "b.policy_id")
        .on((eb) => eb("v.version", "=", eb.fn.coalesce("b.version", "p.latest_version"))),
    );
}
