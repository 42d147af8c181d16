import type { ContractRoute } from "../common/route.ts";
import * as routes from "./routes.ts";

export * from "./internal.ts";
export * as sandboxContracts from "./routes.ts";
export * from "./schemas.ts";

export const sandboxRoutes: readonly ContractRoute[] = Object.values(routes);
