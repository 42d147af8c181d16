import type { ServiceApp, ServiceClient } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import { type ConnectorOptions, ConnectorRuntime } from "../services/runtime.ts";
import { runScheduledDiscoveries } from "../services/specs.ts";
import { registerAttachConnectorCredential } from "./attach-credential.ts";
import { registerCallConnectorTool } from "./call.ts";
import { registerCreateHttpConnector } from "./create-http.ts";
import { registerCreateMcpConnector } from "./create-mcp.ts";
import { registerDeleteConnector } from "./delete.ts";
import { registerGetPendingSpecDiff } from "./diff.ts";
import { registerDiscoverConnector } from "./discover.ts";
import { registerGetConnector } from "./get.ts";
import type { ConnectorRouteDeps } from "./helpers.ts";
import { registerListConnectors } from "./list.ts";
import { registerListPendingSpecs } from "./pending.ts";
import { registerPreviewConnectorDiscovery } from "./preview.ts";
import { registerPromotePendingSpec } from "./promote.ts";
import { registerRemoveConnectorCredential } from "./remove-credential.ts";
import { registerGetConnectorStatus } from "./status.ts";
import { registerListConnectorTools } from "./tools.ts";
import { registerUpdateConnector } from "./update.ts";
import { registerSetConnectorEntryVisibility } from "./visibility.ts";

export interface ConnectorArea {
  runtime: ConnectorRuntime;
  close(): Promise<void>;
}

const SCHEDULE_TICK_MS = 60_000;

/** Connectors: CRUD, discovery and pending specs, visibility, tool calls; the periodic re-discovery. */
export function registerConnectorRoutes(
  app: ServiceApp,
  ctx: ConnectionsContext,
  options: ConnectorOptions = {},
  tenancy?: ServiceClient,
): ConnectorArea {
  const runtime = new ConnectorRuntime(ctx);
  const deps: ConnectorRouteDeps = { app, ctx, runtime, tenancy };
  // Literal paths before parameterized ones (`…/mcp-servers/http` before `…/{serverId}`).
  for (const register of [
    registerListConnectors,
    registerCreateMcpConnector,
    registerCreateHttpConnector,
    registerPreviewConnectorDiscovery,
    registerAttachConnectorCredential,
    registerRemoveConnectorCredential,
    registerGetConnector,
    registerUpdateConnector,
    registerDeleteConnector,
    registerGetConnectorStatus,
    registerListConnectorTools,
    registerDiscoverConnector,
    registerListPendingSpecs,
    registerGetPendingSpecDiff,
    registerPromotePendingSpec,
    registerSetConnectorEntryVisibility,
    registerCallConnectorTool,
  ]) {
    register(deps);
  }
  let timer: NodeJS.Timeout | undefined;
  if (options.scheduler !== false) {
    timer = setInterval(() => {
      runScheduledDiscoveries(ctx, runtime).catch((err: unknown) =>
        ctx.logger.warn({ err: (err as Error).message }, "scheduled connector discovery failed"),
      );
    }, SCHEDULE_TICK_MS);
    timer.unref();
  }
  return {
    runtime,
    async close() {
      if (timer) clearInterval(timer);
      await runtime.close();
    },
  };
}
