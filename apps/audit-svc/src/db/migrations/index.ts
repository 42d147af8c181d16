import type { MigrationList } from "@agentplane/db";
import { outboxMigrations } from "@agentplane/events";
import * as init from "./0001-init.ts";
import * as deadLetters from "./0002-dead-letters.ts";
import * as reservationCall from "./0003-reservation-call.ts";
import * as reservationAge from "./0004-reservation-age.ts";
import * as oneLimitPerScope from "./0006-one-limit-per-scope.ts";

/** Applied in this order under an advisory lock (see `migrateToLatest`). */
export const migrations: MigrationList = {
  "0001_init": init,
  "0002_dead_letters": deadLetters,
  "0003_reservation_call": reservationCall,
  "0004_reservation_age": reservationAge,
  // Domain events of spending-limit writes, committed with the change (see recordDomainEvent).
  ...outboxMigrations("0005"),
  "0006_one_limit_per_scope": oneLimitPerScope,
};
