import type { ContractRoute } from "../common/route.ts";
import { listInferenceProvidersRoute, llmPassThroughRoutes } from "./routes.ts";

export * from "./routes.ts";

export const inferenceRoutes: readonly ContractRoute[] = [listInferenceProvidersRoute, ...llmPassThroughRoutes];
