import { listInstallationAuditTrailRoute, type Principal } from "@agentplane/contracts";
import { forbidden } from "@agentplane/problem-details";
import { type Authorizer, requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { AuditContext } from "../../context.ts";
import type { AuditDb } from "../../db/schema.ts";
import { installationOwner, listAuditTrail } from "../../services/audit-records.ts";
import { checkQueryTimes } from "../../services/time.ts";

/**
 * The installation's first owner (the user who activated it) while still an owner of the
 * organization activation created, through a user token or an owner-role API token of theirs.
 */
async function requireInstallationOwner(
  owner: { orgId: string; ownerId: string } | undefined,
  authorizer: Authorizer,
  principal: Principal,
) {
  const denied = () => forbidden("Only the installation's owner reads the installation audit trail");
  if (!owner) throw denied();
  const userId =
    principal.type === "user" ? principal.id : principal.type === "api_token" ? principal.userId : undefined;
  if (userId !== owner.ownerId || (principal.role && principal.role !== "owner")) throw denied();
  if (principal.orgId && principal.orgId !== owner.orgId) throw denied();
  const decision = await authorizer.check({ principal, permission: "audit:read", orgId: owner.orgId });
  if (decision.decision !== "allowed" || (decision.orgRole && decision.orgRole !== "owner")) throw denied();
}

export function registerListInstallationAuditTrail(app: ServiceApp, { db, authorizer }: AuditContext): void {
  // The activation record never changes once stored: looked up until found, then kept.
  let owner: { orgId: string; ownerId: string } | undefined;
  const ownerOf = async (trail: Kysely<AuditDb>) => {
    owner ??= await installationOwner(trail);
    return owner;
  };
  app.openapi(listInstallationAuditTrailRoute, async (c) => {
    const q = c.req.valid("query");
    checkQueryTimes(q);
    await requireInstallationOwner(await ownerOf(db), authorizer, requirePrincipal(c));
    return c.json(await listAuditTrail(db, null, q), 200);
  });
}
