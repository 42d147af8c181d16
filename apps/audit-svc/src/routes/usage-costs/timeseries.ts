import { getUsageCostTimeseriesRoute, MAX_TIMESERIES_BUCKETS } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { checkBucketCount, resolveWindow } from "../../services/time.ts";
import { usageCostTimeseries } from "../../services/usage.ts";

const HOUR_MS = 3_600_000;

export function registerGetUsageCostTimeseries(app: ServiceApp, { db, authorizer }: AuditContext): void {
  app.openapi(getUsageCostTimeseriesRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const q = c.req.valid("query");
    const window = resolveWindow(q, q.interval === "hour" ? 24 * HOUR_MS : 30 * 24 * HOUR_MS);
    checkBucketCount(window, q.interval, MAX_TIMESERIES_BUCKETS);
    await authorize(c, authorizer, "usage:read", { orgId });
    return c.json(await usageCostTimeseries(db, orgId, window, q.interval, q.projectId), 200);
  });
}
