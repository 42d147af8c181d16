import type { ServiceApp } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";

/** AWS connections: CRUD, the `test` action and the re-signing proxy. */
export function registerAwsRoutes(_app: ServiceApp, _ctx: ConnectionsContext): void {}
