import type { ConnectionsContext } from "../context.ts";
import type { ConnectorRuntime } from "./services/runtime.ts";
import { runScheduledDiscoveries } from "./services/specs.ts";

const SCHEDULE_TICK_MS = 60_000;

/** The periodic re-discovery of connectors whose spec is fetched on a schedule; returns its stop. */
export function startScheduledDiscoveries(ctx: ConnectionsContext, runtime: ConnectorRuntime): () => void {
  const timer = setInterval(() => {
    runScheduledDiscoveries(ctx, runtime).catch((err: unknown) =>
      ctx.logger.warn({ err: (err as Error).message }, "scheduled connector discovery failed"),
    );
  }, SCHEDULE_TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
