import { getMeRoute, type Me, minOrgRole } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import { actorOf } from "../../authz/local-authorizer.ts";
import type { TenancyContext } from "../../context.ts";
import { organizationOfProject, organizationsOfUser } from "../../services/me.ts";
import { getUser } from "../../services/users.ts";

export function registerGetMe(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getMeRoute, async (c) => {
    const principal = requirePrincipal(c);
    const me: Me = {
      type: principal.type,
      id: principal.id,
      ...(principal.displayName ? { displayName: principal.displayName } : {}),
      organizations: [],
      ...(principal.projectId ? { projectId: principal.projectId } : {}),
      ...(principal.sandboxId ? { sandboxId: principal.sandboxId } : {}),
    };
    const actor = actorOf(principal);
    if (actor) {
      const user = await getUser(ctx.db, actor.userId);
      if (user?.email) me.email = user.email;
      if (principal.type === "api_token") me.userId = actor.userId;
      const rows = await organizationsOfUser(ctx.db, actor.userId, actor.orgId);
      me.organizations = rows.map((r) => ({
        id: r.id,
        name: r.name,
        role: actor.cap ? minOrgRole(r.role, actor.cap) : r.role,
      }));
    } else if (principal.type === "cluster" && principal.projectId) {
      const org = await organizationOfProject(ctx.db, principal.projectId);
      // A cluster acts in its project's organization, read-only.
      if (org) me.organizations = [{ id: org.id, name: org.name, role: "viewer" }];
    }
    return c.json(me, 200);
  });
}
