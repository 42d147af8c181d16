import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import {
  GovDescription,
  GovLabels,
  GovName,
  GovOrgParams,
  GovPageQuery,
  GovProjectParams,
  jsonBody,
  jsonRequest,
  NoContent,
} from "./shared.ts";

/** One Cedar statement of a policy: its rule id (`@id("…")` or generated) and effect. */
export const PolicyRule = z.object({ id: z.string(), effect: z.enum(["permit", "forbid"]) }).openapi("PolicyRule");

export const PolicySchema = z
  .object({
    id: z.string(),
    scope: z.enum(["org", "project"]),
    orgId: z.string(),
    projectId: z.string().optional(),
    name: z.string(),
    description: z.string().optional(),
    labels: z.record(z.string(), z.string()),
    /** The Cedar text of the latest version. */
    cedar: z.string(),
    /** The latest version number (1 on create). */
    version: z.number().int(),
    rules: z.array(PolicyRule),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Policy");
export type PolicyResource = z.infer<typeof PolicySchema>;

export const PolicyVersionSchema = z
  .object({
    policyId: z.string(),
    version: z.number().int(),
    cedar: z.string(),
    rules: z.array(PolicyRule),
    author: z.string(),
    reason: z.string().optional(),
    createdAt: Timestamp,
  })
  .openapi("PolicyVersion");
export type PolicyVersionResource = z.infer<typeof PolicyVersionSchema>;

export const PolicyList = z
  .object({ items: z.array(PolicySchema), nextCursor: z.string().optional() })
  .openapi("PolicyList");
export const PolicyVersionList = z
  .object({ items: z.array(PolicyVersionSchema), nextCursor: z.string().optional() })
  .openapi("PolicyVersionList");

const Cedar = z
  .string()
  .min(1)
  .max(256 * 1024);
export const CreatePolicyBody = z
  .strictObject({ name: GovName, description: GovDescription.optional(), labels: GovLabels.optional(), cedar: Cedar })
  .openapi("CreatePolicy");
export const UpdatePolicyBody = z
  .strictObject({
    name: GovName.optional(),
    description: GovDescription.optional(),
    labels: GovLabels.optional(),
    /** A new body makes version n+1; metadata-only changes keep the version. */
    cedar: Cedar.optional(),
    /** Why this version exists (kept with it). */
    reason: z.string().max(1000).optional(),
  })
  .openapi("UpdatePolicy");

export const CedarSchemaDocument = z
  .object({ cedarSchema: z.string(), actions: z.array(z.string()), entityTypes: z.array(z.string()) })
  .openapi("CedarSchemaDocument");

const policyId = pathParam("policyId", "pol_01jc2x3y4z5a6b7c8d9e0f1g2h");
const version = z.coerce
  .number()
  .int()
  .min(1)
  .openapi({ param: { name: "version", in: "path" }, example: 1 });
const OrgPolicyParams = GovOrgParams.extend({ policyId });
const ProjectPolicyParams = GovProjectParams.extend({ policyId });
const tags = ["Governance"];

export const getCedarSchemaRoute = defineRoute(
  { service: "governance", access: "authenticated" },
  {
    operationId: "getCedarSchema",
    method: "get",
    path: "/v1/governance/cedar-schema",
    tags,
    summary: "The Cedar schema policies are validated against (entity types and actions)",
    responses: { 200: jsonBody(CedarSchemaDocument, "The schema") },
  },
);

export const listOrgPoliciesRoute = defineRoute(
  { service: "governance", access: "policies:read" },
  {
    operationId: "listOrgPolicies",
    method: "get",
    path: "/v1/orgs/{orgId}/policies",
    tags,
    summary: "Organization policies",
    request: { params: GovOrgParams, query: GovPageQuery },
    responses: { 200: jsonBody(PolicyList, "One page of policies") },
  },
);
export const createOrgPolicyRoute = defineRoute(
  { service: "governance", access: "policies:manage" },
  {
    operationId: "createOrgPolicy",
    method: "post",
    path: "/v1/orgs/{orgId}/policies",
    tags,
    summary: "Create an organization policy (Cedar, validated against the schema)",
    request: { params: GovOrgParams, ...jsonRequest(CreatePolicyBody) },
    responses: { 201: jsonBody(PolicySchema, "Created") },
  },
);
export const getOrgPolicyRoute = defineRoute(
  { service: "governance", access: "policies:read" },
  {
    operationId: "getOrgPolicy",
    method: "get",
    path: "/v1/orgs/{orgId}/policies/{policyId}",
    tags,
    summary: "An organization policy",
    request: { params: OrgPolicyParams },
    responses: { 200: jsonBody(PolicySchema, "The policy") },
  },
);
export const updateOrgPolicyRoute = defineRoute(
  { service: "governance", access: "policies:manage" },
  {
    operationId: "updateOrgPolicy",
    method: "patch",
    path: "/v1/orgs/{orgId}/policies/{policyId}",
    tags,
    summary: "Change an organization policy (a new body is version n+1)",
    request: { params: OrgPolicyParams, ...jsonRequest(UpdatePolicyBody) },
    responses: { 200: jsonBody(PolicySchema, "Updated") },
  },
);
export const deleteOrgPolicyRoute = defineRoute(
  { service: "governance", access: "policies:manage" },
  {
    operationId: "deleteOrgPolicy",
    method: "delete",
    path: "/v1/orgs/{orgId}/policies/{policyId}",
    tags,
    summary: "Delete an organization policy (409 while bound)",
    request: { params: OrgPolicyParams },
    responses: { 204: NoContent },
  },
);
export const listOrgPolicyVersionsRoute = defineRoute(
  { service: "governance", access: "policies:read" },
  {
    operationId: "listOrgPolicyVersions",
    method: "get",
    path: "/v1/orgs/{orgId}/policies/{policyId}/versions",
    tags,
    summary: "Versions of an organization policy, newest first",
    request: { params: OrgPolicyParams, query: GovPageQuery },
    responses: { 200: jsonBody(PolicyVersionList, "One page of versions") },
  },
);
export const getOrgPolicyVersionRoute = defineRoute(
  { service: "governance", access: "policies:read" },
  {
    operationId: "getOrgPolicyVersion",
    method: "get",
    path: "/v1/orgs/{orgId}/policies/{policyId}/versions/{version}",
    tags,
    summary: "One version of an organization policy",
    request: { params: OrgPolicyParams.extend({ version }) },
    responses: { 200: jsonBody(PolicyVersionSchema, "The version") },
  },
);

export const listProjectPoliciesRoute = defineRoute(
  { service: "governance", access: "project:read" },
  {
    operationId: "listProjectPolicies",
    method: "get",
    path: "/v1/projects/{projectId}/policies",
    tags,
    summary: "Project policies",
    request: { params: GovProjectParams, query: GovPageQuery },
    responses: { 200: jsonBody(PolicyList, "One page of policies") },
  },
);
export const createProjectPolicyRoute = defineRoute(
  { service: "governance", access: "project-policies:manage" },
  {
    operationId: "createProjectPolicy",
    method: "post",
    path: "/v1/projects/{projectId}/policies",
    tags,
    summary: "Create a project policy (Cedar, validated against the schema)",
    request: { params: GovProjectParams, ...jsonRequest(CreatePolicyBody) },
    responses: { 201: jsonBody(PolicySchema, "Created") },
  },
);
export const getProjectPolicyRoute = defineRoute(
  { service: "governance", access: "project:read" },
  {
    operationId: "getProjectPolicy",
    method: "get",
    path: "/v1/projects/{projectId}/policies/{policyId}",
    tags,
    summary: "A project policy",
    request: { params: ProjectPolicyParams },
    responses: { 200: jsonBody(PolicySchema, "The policy") },
  },
);
export const updateProjectPolicyRoute = defineRoute(
  { service: "governance", access: "project-policies:manage" },
  {
    operationId: "updateProjectPolicy",
    method: "patch",
    path: "/v1/projects/{projectId}/policies/{policyId}",
    tags,
    summary: "Change a project policy (a new body is version n+1)",
    request: { params: ProjectPolicyParams, ...jsonRequest(UpdatePolicyBody) },
    responses: { 200: jsonBody(PolicySchema, "Updated") },
  },
);
export const deleteProjectPolicyRoute = defineRoute(
  { service: "governance", access: "project-policies:manage" },
  {
    operationId: "deleteProjectPolicy",
    method: "delete",
    path: "/v1/projects/{projectId}/policies/{policyId}",
    tags,
    summary: "Delete a project policy (409 while bound)",
    request: { params: ProjectPolicyParams },
    responses: { 204: NoContent },
  },
);
export const listProjectPolicyVersionsRoute = defineRoute(
  { service: "governance", access: "project:read" },
  {
    operationId: "listProjectPolicyVersions",
    method: "get",
    path: "/v1/projects/{projectId}/policies/{policyId}/versions",
    tags,
    summary: "Versions of a project policy, newest first",
    request: { params: ProjectPolicyParams, query: GovPageQuery },
    responses: { 200: jsonBody(PolicyVersionList, "One page of versions") },
  },
);
export const getProjectPolicyVersionRoute = defineRoute(
  { service: "governance", access: "project:read" },
  {
    operationId: "getProjectPolicyVersion",
    method: "get",
    path: "/v1/projects/{projectId}/policies/{policyId}/versions/{version}",
    tags,
    summary: "One version of a project policy",
    request: { params: ProjectPolicyParams.extend({ version }) },
    responses: { 200: jsonBody(PolicyVersionSchema, "The version") },
  },
);

export const policyRoutes = [
  getCedarSchemaRoute,
  listOrgPoliciesRoute,
  createOrgPolicyRoute,
  getOrgPolicyRoute,
  updateOrgPolicyRoute,
  deleteOrgPolicyRoute,
  listOrgPolicyVersionsRoute,
  getOrgPolicyVersionRoute,
  listProjectPoliciesRoute,
  createProjectPolicyRoute,
  getProjectPolicyRoute,
  updateProjectPolicyRoute,
  deleteProjectPolicyRoute,
  listProjectPolicyVersionsRoute,
  getProjectPolicyVersionRoute,
] as const;
