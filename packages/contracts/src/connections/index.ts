import type { ContractRoute } from "../common/route.ts";
import { awsRoutes } from "./aws.ts";
import { clusterRoutes } from "./clusters.ts";
import { connectorRoutes } from "./connectors-routes.ts";

export * from "./aws.ts";
export * from "./clusters.ts";
export * from "./connectors.ts";
export * from "./connectors-routes.ts";
export * from "./internal.ts";

/** Every connections-svc `/v1` route; each area adds its list here. */
export const connectionsRoutes: readonly ContractRoute[] = [...clusterRoutes, ...awsRoutes, ...connectorRoutes];
