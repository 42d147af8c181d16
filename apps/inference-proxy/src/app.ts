import { USAGE_RECORDED } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { migrateToLatest } from "@agentplane/db";
import { type Bus, createOutbox } from "@agentplane/events";
import { Pricing } from "@agentplane/pricing";
import {
  type Authorizer,
  checkReadiness,
  createServiceApp,
  DecisionCache,
  IdentityVerifier,
  type InternalKeys,
  type Logger,
  type ReadinessChecks,
  type ServiceApp,
  type ServiceClient,
  type ServiceInstance,
} from "@agentplane/service-kit";
import { sql } from "kysely";
import { Agent } from "undici";
import { hasProviderCredential, type InferenceConfig } from "./config.ts";
import type { InferenceContext } from "./context.ts";
import { INFERENCE_SCHEMA, migrations } from "./db/migrations.ts";
import { CallerResolver } from "./proxy/caller.ts";
import { GroupCommit } from "./proxy/group-commit.ts";
import { createLlmProxy } from "./proxy/handler.ts";
import { ProjectCredentials } from "./proxy/project-credentials.ts";
import { SpendGate } from "./proxy/spend.ts";
import { registerRoutes } from "./routes/index.ts";
import { llmPassThroughFetch } from "./routes/llm/pass-through.ts";

export { INFERENCE_SCHEMA };

export interface InferenceServiceDeps {
  database: Database;
  bus: Bus;
  keys: InternalKeys;
  logger: Logger;
  /** Tenancy's decisions (`llm:invoke` on the project): in process, or a RemoteAuthorizer. */
  authorizer: Authorizer;
  /** Tenancy, to find the caller's only project for the short form. */
  tenancy?: ServiceClient;
  /** The audit service's spend API (reserve, release). */
  audit: ServiceClient;
  /** Governance's decision API; without it every call is allowed (it is optional until deployed). */
  governance?: ServiceClient;
  config: InferenceConfig;
  /** Price table overrides for estimates (the audit service's PRICE_TABLE_JSON). */
  pricing?: Pricing;
}

export interface InferenceService extends ServiceInstance {
  app: ServiceApp;
  /** True when some provider has a credential (the start banner says so). */
  hasModel: boolean;
}

/**
 * The inference proxy: `/v1/inference/providers` and the `/v1/llm/**` streaming pass-through with
 * spend reserved before and recorded after each call. Runs its migrations (the outbox) first.
 */
export async function createInferenceService(deps: InferenceServiceDeps): Promise<InferenceService> {
  await migrateToLatest(deps.database, INFERENCE_SCHEMA, migrations);
  const outbox = createOutbox({
    database: deps.database,
    schema: INFERENCE_SCHEMA,
    bus: deps.bus,
    logger: deps.logger,
  });
  outbox.start();
  const pricing = deps.pricing ?? new Pricing();
  const callers = new CallerResolver(deps.authorizer, deps.tenancy);
  // No cap on connections per provider origin: streams stay open for minutes, and a cap would
  // queue new calls behind them (a thousand open streams need a thousand connections).
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: null });
  // Usage goes to audit over the bus: through the outbox in the database, or handed over in process.
  const checks: ReadinessChecks = {
    database: async () => {
      await sql`select 1`.execute(deps.database.kysely);
    },
    bus: () => deps.bus.ready(),
  };
  const app = createServiceApp({ name: "inference", keys: deps.keys, logger: deps.logger, checks });
  const credentials = new ProjectCredentials(deps.governance, deps.config.providers);
  const spend = new SpendGate(deps.audit, deps.logger, deps.config.spend);
  // Usage events of the calls that end within 20 ms of each other share one outbox insert (and so
  // one relay and one settling transaction in audit), written beside the calls rather than on
  // each one's path. Where audit's consumer runs in this process (all-in-one), the batch is handed
  // to it instead and only what it did not store is written to the outbox: each event is stored
  // once, with no outbox row written and deleted for it. Once the service is closing, whatever is
  // left goes to the outbox: the consumer may be closing too.
  let closing = false;
  const usage = new GroupCommit<Record<string, unknown>, string>(
    // The event keeps the id and time it was made with (no second id drawn for its envelope).
    (batch) =>
      outbox.publishMany(
        batch.map((data) => ({
          topic: USAGE_RECORDED,
          data,
          options: { id: String(data.id), time: String(data.time) },
        })),
        { handOff: !closing },
      ),
    { delayMs: 20 },
  );
  const llm = createLlmProxy({
    config: deps.config,
    verifier: new IdentityVerifier(deps.keys, "inference"),
    callers,
    credentials,
    spend,
    ...(deps.governance
      ? {
          governance: {
            client: deps.governance,
            // The clock given explicitly: its ages are then read on each lookup, with no timer per millisecond.
            cache: new DecisionCache({ callerService: "inference", clock: performance }),
          },
        }
      : {}),
    recordUsage: (event) => usage.add(event),
    // A model absent from the table is estimated as the dearest of its family (the table's dearest
    // when the family or the model is unknown), as audit prices its usage: never under-reserved.
    price: (model) => pricing.quote(model).price,
    outputCap: (model) => pricing.outputCap(model),
    dispatcher,
    logger: deps.logger,
  });
  const context: InferenceContext = { callers, credentials, llm };
  registerRoutes(app, context);

  return {
    name: "inference",
    app,
    hasModel: hasProviderCredential(deps.config),
    fetch: llmPassThroughFetch(app, context),
    ready: async () => (await checkReadiness(checks)).ready,
    readiness: () => checkReadiness(checks),
    async close() {
      closing = true;
      // Calls that just ended record their usage through the spend gate and the usage batches.
      await llm.settled();
      await spend.drain();
      await usage.drain();
      await outbox.stop();
      await dispatcher.close();
    },
  };
}
