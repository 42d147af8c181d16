import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import {
  boundPolicySizeConflict,
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
    description:
      "Agentplane's Cedar schema (entity types such as User, Sandbox, Model, ClusterResource, AwsService, Tool, Host, and the governed actions) as Cedar text and JSON, so authors can validate policies offline.",
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
    description: "The organization's policies with their latest version, cursor-paged.",
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
    description:
      "Creates an organization policy as version 1. The Cedar text is parsed and validated against the schema (a 400 carries Cedar's messages with line and column); every statement gets its `@id` rule id, generated when absent.",
    request: { params: GovOrgParams, ...jsonRequest(CreatePolicyBody) },
    responses: {
      201: jsonBody(PolicySchema, "Created"),
      ...limitedCreateConflict("policies", "A policy of this name exists here"),
    },
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
    description: "One organization policy with its latest body and rule ids.",
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
    description:
      "Changes name, description or labels; a new Cedar body becomes version n+1 with its author and reason. Bindings on `latest` use it within seconds.",
    request: { params: OrgPolicyParams, ...jsonRequest(UpdatePolicyBody) },
    responses: { 200: jsonBody(PolicySchema, "Updated"), ...boundPolicySizeConflict() },
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
    description: "Deletes the policy and its versions; while a binding uses it the answer is 409 naming the bindings.",
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
    description: "Every immutable version of the policy (body, author, time, reason), newest first.",
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
    description: "One immutable version of the policy.",
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
    description: "The project's own policies with their latest version, cursor-paged.",
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
    description:
      "Creates a project policy as version 1, validated against the Cedar schema like organization policies. A project policy can only be bound in its project.",
    request: { params: GovProjectParams, ...jsonRequest(CreatePolicyBody) },
    responses: {
      201: jsonBody(PolicySchema, "Created"),
      ...limitedCreateConflict("policies", "A policy of this name exists here"),
    },
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
    description: "One project policy with its latest body and rule ids.",
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
    description: "Changes name, description or labels; a new Cedar body becomes version n+1.",
    request: { params: ProjectPolicyParams, ...jsonRequest(UpdatePolicyBody) },
    responses: { 200: jsonBody(PolicySchema, "Updated"), ...boundPolicySizeConflict() },
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
    description: "Deletes the policy and its versions; 409 while bound.",
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
    description: "Every immutable version of the project policy, newest first.",
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
    description: "One immutable version of the project policy.",
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
