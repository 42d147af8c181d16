import { getMe, type Me, minOrgRole } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import { actorOf } from "../../authz/local-authorizer.ts";
import type { TenancyContext } from "../../context.ts";
import { getUser } from "../../services/users.ts";

export function registerGetMe(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getMe, async (c) => {
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
      let q = ctx.db
        .selectFrom("orgs as o")
        .innerJoin("org_members as m", "m.org_id", "o.id")
        .select(["o.id", "o.name", "m.role"])
        .where("m.user_id", "=", actor.userId)
        .orderBy("o.id");
      if (actor.orgId) q = q.where("o.id", "=", actor.orgId);
      const rows = await q.execute();
      me.organizations = rows.map((r) => ({
        id: r.id,
        name: r.name,
        role: actor.cap ? minOrgRole(r.role, actor.cap) : r.role,
      }));
    } else if (principal.type === "cluster" && principal.projectId) {
      const org = await ctx.db
        .selectFrom("projects as p")
        .innerJoin("orgs as o", "o.id", "p.org_id")
        .select(["o.id", "o.name"])
        .where("p.id", "=", principal.projectId)
        .executeTakeFirst();
      // A cluster acts in its project's organization, read-only.
      if (org) me.organizations = [{ id: org.id, name: org.name, role: "viewer" }];
    }
    return c.json(me, 200);
  });
}
