import { getAuditTrailTimeseriesRoute, MAX_TIMESERIES_BUCKETS } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { auditTrailTimeseries } from "../../services/audit-analytics.ts";
import { checkBucketCount, resolveWindow } from "../../services/time.ts";

const HOUR_MS = 3_600_000;

export function registerGetAuditTrailTimeseries(app: ServiceApp, { db, authorizer }: AuditContext): void {
  app.openapi(getAuditTrailTimeseriesRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const q = c.req.valid("query");
    // Default windows: the last 24 hours by hour, the last 30 days by day.
    const window = resolveWindow(q, q.interval === "hour" ? 24 * HOUR_MS : 30 * 24 * HOUR_MS);
    checkBucketCount(window, q.interval, MAX_TIMESERIES_BUCKETS);
    await authorize(c, authorizer, "audit:read", { orgId });
    return c.json(await auditTrailTimeseries(db, orgId, window, q.interval), 200);
  });
}
