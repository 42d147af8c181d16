import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../context.ts";
import { registerCreateBinding } from "./bindings/create.ts";
import { registerDeleteBinding } from "./bindings/delete.ts";
import { registerGetDrift } from "./bindings/drift.ts";
import { registerGetBinding } from "./bindings/get.ts";
import { registerListBindings } from "./bindings/list.ts";
import { registerCredentialRoutes } from "./credentials/crud.ts";
import { registerGetEffectivePolicy } from "./effective-policy/get.ts";
import { registerDecide } from "./internal/decide.ts";
import { registerFindCredentials } from "./internal/find-credentials.ts";
import { registerResolveCredential } from "./internal/resolve-credential.ts";
import { registerGetCedarSchema } from "./policies/cedar-schema.ts";
import { registerCreatePolicy } from "./policies/create.ts";
import { registerDeletePolicy } from "./policies/delete.ts";
import { registerGetPolicy } from "./policies/get.ts";
import { registerListPolicies } from "./policies/list.ts";
import { registerUpdatePolicy } from "./policies/update.ts";
import { registerPolicyVersions } from "./policies/versions.ts";
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
    registerPolicyVersions,
    registerListBindings,
    registerCreateBinding,
    registerGetDrift,
    registerGetBinding,
    registerDeleteBinding,
    registerCredentialRoutes,
    registerGetEffectivePolicy,
    registerDecide,
    registerResolveCredential,
    registerFindCredentials,
  ]) {
    register(deps);
  }
}
