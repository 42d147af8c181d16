import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { pathParam } from "../common/schemas.ts";
import {
  AuditStatsQuery,
  AuditTimeseriesQuery,
  AuditTrailPage,
  AuditTrailQuery,
  AuditTrailStats,
  AuditTrailTimeseries,
  CreateSpendingLimitBody,
  SpendingLimitList,
  SpendingLimitSchema,
  SpendingLimitStatusList,
  UpdateSpendingLimitBody,
  UsageCosts,
  UsageCostsQuery,
  UsageCostTimeseries,
  UsageTimeseriesQuery,
} from "./schemas.ts";

const OrgParams = z.object({ orgId: pathParam("orgId", "org_01hzx4c7v0m3q9w2e8r5t6y1ua") });
const LimitParams = OrgParams.extend({ limitId: pathParam("limitId", "spl_01hzx4c7v0m3q9w2e8r5t6y1ua") });
const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const listAuditTrailRoute = defineRoute(
  { service: "audit", access: "audit:read" },
  {
    operationId: "listAuditTrail",
    description:
      "The organization's audit records (requests, denials and domain events), newest first, filtered by action, target, outcome and time; page with `nextCursor`. Admins and owners only.",
    method: "get",
    path: "/v1/orgs/{orgId}/audit-trail",
    tags: ["Audit trail"],
    summary: "Audit records, newest first, paginated by timestamp cursor",
    request: { params: OrgParams, query: AuditTrailQuery },
    responses: { 200: json(AuditTrailPage, "A page of audit records") },
  },
);

/**
 * Records that belong to no organization (an unknown token's 401, installation activation, a
 * request whose organization could not be known), for the installation's owner: an owner of the
 * organization created when the installation was activated.
 */
export const listInstallationAuditTrailRoute = defineRoute(
  { service: "audit", access: "authenticated" },
  {
    operationId: "listInstallationAuditTrail",
    description:
      "Records that belong to no organization, such as unknown tokens' 401s and installation activation, newest first. The installation's first owner only.",
    method: "get",
    path: "/v1/installation/audit-trail",
    tags: ["Audit trail"],
    summary: "Audit records of no organization, newest first (installation owner only)",
    request: { query: AuditTrailQuery },
    responses: { 200: json(AuditTrailPage, "A page of audit records") },
  },
);

export const getAuditTrailStatsRoute = defineRoute(
  { service: "audit", access: "audit:read" },
  {
    operationId: "getAuditTrailStats",
    description: "Record counts by action, outcome and actor type over a time window (default: the last 24 hours).",
    method: "get",
    path: "/v1/orgs/{orgId}/audit-trail/stats",
    tags: ["Audit trail"],
    summary: "Counts by action, outcome and actor type over a window (default: the last 24 hours)",
    request: { params: OrgParams, query: AuditStatsQuery },
    responses: { 200: json(AuditTrailStats, "Counts") },
  },
);

export const getAuditTrailTimeseriesRoute = defineRoute(
  { service: "audit", access: "audit:read" },
  {
    operationId: "getAuditTrailTimeseries",
    description: "Record counts per hour or day over a window, zero-filled, at most 1000 buckets.",
    method: "get",
    path: "/v1/orgs/{orgId}/audit-trail/timeseries",
    tags: ["Audit trail"],
    summary: "Record counts per hour or day, zero-filled, at most 1000 buckets",
    request: { params: OrgParams, query: AuditTimeseriesQuery },
    responses: { 200: json(AuditTrailTimeseries, "Buckets") },
  },
);

export const listUsageCostsRoute = defineRoute(
  { service: "audit", access: "usage:read" },
  {
    operationId: "listUsageCosts",
    description:
      "Model usage (tokens and cost priced from the price table) grouped by project, model, provider or day over a window (default: this calendar month).",
    method: "get",
    path: "/v1/orgs/{orgId}/usage-costs",
    tags: ["Usage costs"],
    summary: "Model usage totals grouped by project, model, provider or day (default: this calendar month)",
    request: { params: OrgParams, query: UsageCostsQuery },
    responses: { 200: json(UsageCosts, "Totals") },
  },
);

export const getUsageCostTimeseriesRoute = defineRoute(
  { service: "audit", access: "usage:read" },
  {
    operationId: "getUsageCostTimeseries",
    description: "Model cost per hour or day over a window, zero-filled, at most 1000 buckets.",
    method: "get",
    path: "/v1/orgs/{orgId}/usage-costs/timeseries",
    tags: ["Usage costs"],
    summary: "Cost per hour or day, zero-filled, at most 1000 buckets",
    request: { params: OrgParams, query: UsageTimeseriesQuery },
    responses: { 200: json(UsageCostTimeseries, "Buckets") },
  },
);

export const createSpendingLimitRoute = defineRoute(
  { service: "audit", access: "spending-limits:manage" },
  {
    operationId: "createSpendingLimit",
    description:
      "Caps model spend per day or month for the organization or one project; alerts at the thresholds given. Once reached, `/llm/**` answers 429 `spending-limit-reached` until the period resets. One limit per scope and period: a second answers 409 `conflict` with the existing limit's id in `existingLimitId` (change that one instead).",
    method: "post",
    path: "/v1/orgs/{orgId}/spending-limits",
    tags: ["Spending limits"],
    summary: "Create a spending limit for the organization or one of its projects",
    request: {
      params: OrgParams,
      body: { required: true, content: { "application/json": { schema: CreateSpendingLimitBody } } },
    },
    responses: { 201: json(SpendingLimitSchema, "The limit") },
  },
);

export const listSpendingLimitsRoute = defineRoute(
  { service: "audit", access: "spending-limits:read" },
  {
    operationId: "listSpendingLimits",
    description: "The organization's spending limits.",
    method: "get",
    path: "/v1/orgs/{orgId}/spending-limits",
    tags: ["Spending limits"],
    summary: "List spending limits",
    request: { params: OrgParams },
    responses: { 200: json(SpendingLimitList, "The limits") },
  },
);

export const getSpendingLimitStatusRoute = defineRoute(
  { service: "audit", access: "spending-limits:read" },
  {
    operationId: "getSpendingLimitStatus",
    description: "For every limit: spent, reserved, remaining and state in its current period.",
    method: "get",
    path: "/v1/orgs/{orgId}/spending-limits/status",
    tags: ["Spending limits"],
    summary: "Spent, remaining and state of every limit in its current period",
    request: { params: OrgParams },
    responses: { 200: json(SpendingLimitStatusList, "Status per limit") },
  },
);

export const getSpendingLimitRoute = defineRoute(
  { service: "audit", access: "spending-limits:read" },
  {
    operationId: "getSpendingLimit",
    description: "One spending limit.",
    method: "get",
    path: "/v1/orgs/{orgId}/spending-limits/{limitId}",
    tags: ["Spending limits"],
    summary: "Get a spending limit",
    request: { params: LimitParams },
    responses: { 200: json(SpendingLimitSchema, "The limit") },
  },
);

export const updateSpendingLimitRoute = defineRoute(
  { service: "audit", access: "spending-limits:manage" },
  {
    operationId: "updateSpendingLimit",
    description:
      "Changes a limit's amount, period or alert thresholds; takes effect for the next model call. A period that another limit of the same scope holds answers 409 `conflict` naming it in `existingLimitId`.",
    method: "patch",
    path: "/v1/orgs/{orgId}/spending-limits/{limitId}",
    tags: ["Spending limits"],
    summary: "Change the amount, period or alert thresholds of a limit",
    request: {
      params: LimitParams,
      body: { required: true, content: { "application/json": { schema: UpdateSpendingLimitBody } } },
    },
    responses: { 200: json(SpendingLimitSchema, "The limit") },
  },
);

export const deleteSpendingLimitRoute = defineRoute(
  { service: "audit", access: "spending-limits:manage" },
  {
    operationId: "deleteSpendingLimit",
    description: "Deletes the limit; model access it blocked resumes.",
    method: "delete",
    path: "/v1/orgs/{orgId}/spending-limits/{limitId}",
    tags: ["Spending limits"],
    summary: "Delete a spending limit",
    request: { params: LimitParams },
    responses: { 204: { description: "Deleted" } },
  },
);
