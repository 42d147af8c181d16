import { getAuditTrailStatsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { auditTrailStats } from "../../services/audit-analytics.ts";
import { resolveWindow } from "../../services/time.ts";

const DAY_MS = 24 * 3_600_000;

export function registerGetAuditTrailStats(app: ServiceApp, { db, authorizer }: AuditContext): void {
  app.openapi(getAuditTrailStatsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const window = resolveWindow(c.req.valid("query"), DAY_MS);
    await authorize(c, authorizer, "audit:read", { orgId });
    return c.json(await auditTrailStats(db, orgId, window), 200);
  });
}
