import { listAuditTrailRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { listAuditTrail } from "../../services/audit-records.ts";
import { checkQueryTimes } from "../../services/time.ts";

export function registerListAuditTrail(app: ServiceApp, { db, authorizer }: AuditContext): void {
  app.openapi(listAuditTrailRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const q = c.req.valid("query");
    checkQueryTimes(q);
    await authorize(c, authorizer, "audit:read", { orgId });
    return c.json(await listAuditTrail(db, orgId, q), 200);
  });
}
