import type { ContractRoute } from "../common/route.ts";
import { bindingRoutes } from "./bindings.ts";
import { credentialRoutes } from "./credentials.ts";
import { evaluatePolicyDecisionRoute } from "./decisions.ts";
import { getSandboxEffectivePolicyRoute } from "./effective-policy.ts";
import { policyRoutes } from "./policies.ts";

export * from "./bindings.ts";
export * from "./cedar-schema.ts";
export * from "./credentials.ts";
export * from "./decisions.ts";
export * from "./effective-policy.ts";
export * from "./internal.ts";
export * from "./policies.ts";
export * from "./selector.ts";

export const governanceRoutes: readonly ContractRoute[] = [
  ...policyRoutes,
  ...bindingRoutes,
  ...credentialRoutes,
  getSandboxEffectivePolicyRoute,
  evaluatePolicyDecisionRoute,
];
