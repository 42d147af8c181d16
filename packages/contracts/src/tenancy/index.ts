import type { ContractRoute } from "../common/route.ts";

export * from "./internal.ts";

export const tenancyRoutes: readonly ContractRoute[] = [];
