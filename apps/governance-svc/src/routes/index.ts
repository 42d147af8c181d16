import type { ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../context.ts";
import { registerCreateOrgPolicyBinding } from "./bindings/create-org.ts";
import { registerCreateProjectPolicyBinding } from "./bindings/create-project.ts";
import { registerDeleteOrgPolicyBinding } from "./bindings/delete-org.ts";
import { registerDeleteProjectPolicyBinding } from "./bindings/delete-project.ts";
import { registerGetPolicyBindingDrift } from "./bindings/drift.ts";
import { registerGetOrgPolicyBinding } from "./bindings/get-org.ts";
import { registerGetProjectPolicyBinding } from "./bindings/get-project.ts";
import { registerListOrgPolicyBindings } from "./bindings/list-org.ts";
import { registerListProjectPolicyBindings } from "./bindings/list-project.ts";
import { registerCreateCredential } from "./credentials/create.ts";
import { registerDeleteCredential } from "./credentials/delete.ts";
import { registerGetCredential } from "./credentials/get.ts";
import { registerListCredentials } from "./credentials/list.ts";
import { registerUpdateCredential } from "./credentials/update.ts";
import { registerEvaluatePolicyDecision } from "./decisions/evaluate.ts";
import { registerGetSandboxEffectivePolicy } from "./effective-policy/get.ts";
import { registerInternalDecide } from "./internal/decide.ts";
import { registerInternalFindCredentials } from "./internal/find-credentials.ts";
import { registerInternalGovernanceMetrics } from "./internal/metrics.ts";
import { registerInternalResolveCredential } from "./internal/resolve-credential.ts";
import { registerGetCedarSchema } from "./policies/cedar-schema.ts";
import { registerCreateOrgPolicy } from "./policies/create-org.ts";
import { registerCreateProjectPolicy } from "./policies/create-project.ts";
import { registerDeleteOrgPolicy } from "./policies/delete-org.ts";
import { registerDeleteProjectPolicy } from "./policies/delete-project.ts";
import { registerGetOrgPolicy } from "./policies/get-org.ts";
import { registerGetProjectPolicy } from "./policies/get-project.ts";
import { registerGetOrgPolicyVersion } from "./policies/get-version-org.ts";
import { registerGetProjectPolicyVersion } from "./policies/get-version-project.ts";
import { registerListOrgPolicies } from "./policies/list-org.ts";
import { registerListProjectPolicies } from "./policies/list-project.ts";
import { registerListOrgPolicyVersions } from "./policies/list-versions-org.ts";
import { registerListProjectPolicyVersions } from "./policies/list-versions-project.ts";
import { registerUpdateOrgPolicy } from "./policies/update-org.ts";
import { registerUpdateProjectPolicy } from "./policies/update-project.ts";

/** Every operation of governance-svc, one file each; literal paths (drift) before the parameterised ones they resemble. */
const REGISTRATIONS: ((app: ServiceApp, ctx: GovernanceContext) => void)[] = [
  registerGetCedarSchema,
  registerListOrgPolicies,
  registerListProjectPolicies,
  registerCreateOrgPolicy,
  registerCreateProjectPolicy,
  registerGetOrgPolicy,
  registerGetProjectPolicy,
  registerUpdateOrgPolicy,
  registerUpdateProjectPolicy,
  registerDeleteOrgPolicy,
  registerDeleteProjectPolicy,
  registerListOrgPolicyVersions,
  registerListProjectPolicyVersions,
  registerGetOrgPolicyVersion,
  registerGetProjectPolicyVersion,
  registerListOrgPolicyBindings,
  registerListProjectPolicyBindings,
  registerCreateOrgPolicyBinding,
  registerCreateProjectPolicyBinding,
  registerGetPolicyBindingDrift,
  registerGetOrgPolicyBinding,
  registerGetProjectPolicyBinding,
  registerDeleteOrgPolicyBinding,
  registerDeleteProjectPolicyBinding,
  registerListCredentials,
  registerCreateCredential,
  registerGetCredential,
  registerUpdateCredential,
  registerDeleteCredential,
  registerGetSandboxEffectivePolicy,
  registerEvaluatePolicyDecision,
  registerInternalDecide,
  registerInternalGovernanceMetrics,
  registerInternalResolveCredential,
  registerInternalFindCredentials,
];

export function registerRoutes(app: ServiceApp, ctx: GovernanceContext): void {
  for (const register of REGISTRATIONS) register(app, ctx);
}
