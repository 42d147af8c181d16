import type { ContractRoute } from "../common/route.ts";
import {
  createSpendingLimitRoute,
  deleteSpendingLimitRoute,
  getAuditTrailStatsRoute,
  getAuditTrailTimeseriesRoute,
  getSpendingLimitRoute,
  getSpendingLimitStatusRoute,
  getUsageCostTimeseriesRoute,
  listAuditTrailRoute,
  listInstallationAuditTrailRoute,
  listSpendingLimitsRoute,
  listUsageCostsRoute,
  updateSpendingLimitRoute,
} from "./routes.ts";

export * from "./internal.ts";
export * from "./routes.ts";
export * from "./schemas.ts";

export const auditRoutes: readonly ContractRoute[] = [
  listAuditTrailRoute,
  listInstallationAuditTrailRoute,
  getAuditTrailStatsRoute,
  getAuditTrailTimeseriesRoute,
  listUsageCostsRoute,
  getUsageCostTimeseriesRoute,
  createSpendingLimitRoute,
  listSpendingLimitsRoute,
  getSpendingLimitStatusRoute,
  getSpendingLimitRoute,
  updateSpendingLimitRoute,
  deleteSpendingLimitRoute,
];
