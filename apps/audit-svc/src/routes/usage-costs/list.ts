import { listUsageCostsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { monthStart, resolveWindow } from "../../services/time.ts";
import { usageCosts } from "../../services/usage.ts";

export function registerListUsageCosts(app: ServiceApp, { db, authorizer }: AuditContext): void {
  app.openapi(listUsageCostsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const q = c.req.valid("query");
    // Default: from the start of this calendar month (UTC) until now.
    const window = resolveWindow(q.from ? q : { ...q, from: monthStart(new Date()).toISOString() }, 0);
    await authorize(c, authorizer, "usage:read", { orgId });
    return c.json(await usageCosts(db, orgId, window, q.groupBy), 200);
  });
}
