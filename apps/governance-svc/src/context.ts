import type { ObjectLimits } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import type { Bus, Outbox } from "@agentplane/events";
import type { Authorizer, Logger, ServiceClient } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { PolicyCompiler } from "./cedar/compiler.ts";
import type { StsConfig } from "./config.ts";
import type { GovernanceDb } from "./db/schema.ts";
import type { DecisionEngine } from "./engine/decision-engine.ts";
import type { ChangeFanout } from "./engine/invalidation.ts";
import type { EgressVersions } from "./services/egress-versions.ts";

export interface DecisionCounters {
  allow: number;
  deny: number;
  dryrunDeny: number;
}

/** What every route and service verb of governance works with. */
export interface GovernanceContext {
  db: Kysely<GovernanceDb>;
  database: Database;
  bus: Bus;
  /** Audit records are written here inside the transaction of the change they describe. */
  outbox: Outbox;
  logger: Logger;
  authorizer: Authorizer;
  engine: DecisionEngine;
  /** The policy versions each sandbox's egress proxy last enforced (for drift). */
  egressVersions: EgressVersions;
  fanout: ChangeFanout;
  /** tenancy's internal API (the members and API tokens a decision is asked for). */
  tenancy: ServiceClient | undefined;
  /** sandbox-svc's internal API (effective policy and drift read sandboxes through it). */
  sandboxes: ServiceClient | undefined;
  secrets: { current: Uint8Array; previous: Uint8Array | undefined; rotationGraceMs: number };
  sts: StsConfig;
  counters: DecisionCounters & { credentialResolutions: number };
  /** How many policies, bindings and credentials each organization or project may hold. */
  objectLimits: ObjectLimits;
  /** Compiles policy bodies off the main thread. */
  compiler: PolicyCompiler;
}
