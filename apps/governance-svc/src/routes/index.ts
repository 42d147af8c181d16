import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../context.ts";
import { registerCreateBinding } from "./bindings/create.ts";
import { registerDeleteBinding } from "./bindings/delete.ts";
import { registerGetDrift } from "./bindings/drift.ts";
import { registerGetBinding } from "./bindings/get.ts";
import { registerListBindings } from "./bindings/list.ts";
import { registerCreateCredential } from "./credentials/create.ts";
import { registerDeleteCredential } from "./credentials/delete.ts";
import { registerGetCredential } from "./credentials/get.ts";
import { registerListCredentials } from "./credentials/list.ts";
import { registerUpdateCredential } from "./credentials/update.ts";
import { registerGetEffectivePolicy } from "./effective-policy/get.ts";
import { registerDecide } from "./internal/decide.ts";
import { registerFindCredentials } from "./internal/find-credentials.ts";
import { registerDecisionMetrics } from "./internal/metrics.ts";
import { registerResolveCredential } from "./internal/resolve-credential.ts";
import { registerGetCedarSchema } from "./policies/cedar-schema.ts";
import { registerCreatePolicy } from "./policies/create.ts";
import { registerDeletePolicy } from "./policies/delete.ts";
import { registerGetPolicy } from "./policies/get.ts";
import { registerGetPolicyVersion } from "./policies/get-version.ts";
import { registerListPolicies } from "./policies/list.ts";
import { registerListPolicyVersions } from "./policies/list-versions.ts";
import { registerUpdatePolicy } from "./policies/update.ts";
import type { RouteDeps } from "./scope.ts";

/** Every route of governance; literal paths (drift) before the parameterised ones they resemble. */
export function registerRoutes(app: ServiceApp, ctx: GovernanceContext): void {
  const deps: RouteDeps = { app, ctx };
  for (const register of [
    registerGetCedarSchema,
    registerListPolicies,
    registerCreatePolicy,
    registerGetPolicy,
    registerUpdatePolicy,
    registerDeletePolicy,
    registerListPolicyVersions,
    registerGetPolicyVersion,
    registerListBindings,
    registerCreateBinding,
    registerGetDrift,
    registerGetBinding,
    registerDeleteBinding,
    registerListCredentials,
    registerCreateCredential,
    registerGetCredential,
    registerUpdateCredential,
    registerDeleteCredential,
    registerGetEffectivePolicy,
    registerDecide,
    registerDecisionMetrics,
    registerResolveCredential,
    registerFindCredentials,
  ]) {
    register(deps);
  }
}
