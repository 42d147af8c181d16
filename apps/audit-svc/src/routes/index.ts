import type { ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../context.ts";
import { registerListAuditTrail } from "./audit-trail/list.ts";
import { registerListInstallationAuditTrail } from "./audit-trail/list-installation.ts";
import { registerGetAuditTrailStats } from "./audit-trail/stats.ts";
import { registerGetAuditTrailTimeseries } from "./audit-trail/timeseries.ts";
import { registerInternalSpendOpen } from "./internal/open-spend.ts";
import { registerInternalSpendRelease } from "./internal/release-spend.ts";
import { registerInternalSpendReserve } from "./internal/reserve-spend.ts";
import { registerInternalSpendSettle } from "./internal/settle-spend.ts";
import { registerCreateSpendingLimit } from "./spending-limits/create.ts";
import { registerDeleteSpendingLimit } from "./spending-limits/delete.ts";
import { registerGetSpendingLimit } from "./spending-limits/get.ts";
import { registerListSpendingLimits } from "./spending-limits/list.ts";
import { registerGetSpendingLimitStatus } from "./spending-limits/status.ts";
import { registerUpdateSpendingLimit } from "./spending-limits/update.ts";
import { registerListUsageCosts } from "./usage-costs/list.ts";
import { registerGetUsageCostTimeseries } from "./usage-costs/timeseries.ts";

const REGISTRATIONS: ((app: ServiceApp, ctx: AuditContext) => void)[] = [
  registerListAuditTrail,
  registerListInstallationAuditTrail,
  registerGetAuditTrailStats,
  registerGetAuditTrailTimeseries,
  registerListUsageCosts,
  registerGetUsageCostTimeseries,
  registerCreateSpendingLimit,
  registerListSpendingLimits,
  registerGetSpendingLimitStatus,
  registerGetSpendingLimit,
  registerUpdateSpendingLimit,
  registerDeleteSpendingLimit,
  registerInternalSpendReserve,
  registerInternalSpendSettle,
  registerInternalSpendRelease,
  registerInternalSpendOpen,
];

/** Every operation of audit-svc, one file each, by its contract. */
export function registerRoutes(app: ServiceApp, ctx: AuditContext): void {
  for (const register of REGISTRATIONS) register(app, ctx);
}
