import type { Permission } from "@agentplane/contracts";
import { requirePrincipal, type ServiceContext } from "@agentplane/service-kit";
import { type Actor, checkAccess, type SandboxDeps } from "../services/context.ts";

/** Authorizes the caller for `permission` on the project and returns it as an actor for service verbs. */
export async function actorFor(
  deps: SandboxDeps,
  c: ServiceContext,
  permission: Permission,
  projectId: string,
  sandboxId?: string,
): Promise<Actor> {
  const principal = requirePrincipal(c);
  const { orgId } = await checkAccess(deps, principal, permission, projectId, sandboxId);
  return { principal, requestId: c.get("requestId"), ...(orgId ? { orgId } : {}) };
}
