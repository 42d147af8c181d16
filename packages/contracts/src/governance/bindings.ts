import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import {
  BOUND_POLICY_SIZE_CONFLICT,
  GovOrgParams,
  GovPageQuery,
  GovProjectParams,
  jsonBody,
  jsonRequest,
  NoContent,
} from "./shared.ts";

/** Kinds of resources a binding can select inside a project. */
export const BINDING_TARGET_KINDS = ["sandbox", "cluster", "aws-connection", "connector"] as const;
export type BindingTargetKind = (typeof BINDING_TARGET_KINDS)[number];

/**
 * What a binding reaches. Without a target a project binding covers the whole project and an org
 * binding the whole organization. `projectIds` narrows an org binding to those projects and
 * `projectSelector` to the projects whose labels match; `kind`
 * (with an optional label `selector`, Kubernetes syntax) narrows either to resources of that kind.
 */
export const BindingTarget = z
  .strictObject({
    projectIds: z.array(z.string().min(1).max(64)).min(1).max(500).optional(),
    projectSelector: z
      .string()
      .max(1000)
      .optional()
      .describe("Organization bindings only: the projects whose labels match this selector (Kubernetes syntax)"),
    kind: z.enum(BINDING_TARGET_KINDS).optional(),
    selector: z.string().max(1000).optional(),
  })
  .describe("Where it applies: projectIds, projectSelector, kind and a label selector (absent: everywhere)")
  .openapi("PolicyBindingTarget");
export type BindingTarget = z.infer<typeof BindingTarget>;

export const BindingMode = z.enum(["enforce", "dryrun"]);

export const PolicyBindingSchema = z
  .object({
    id: z.string(),
    scope: z.enum(["org", "project"]),
    orgId: z.string(),
    projectId: z.string().optional(),
    policyId: z.string(),
    /** A pinned version number, or `latest`. */
    version: z.union([z.number().int(), z.literal("latest")]),
    mode: BindingMode,
    target: BindingTarget,
    createdBy: z.string(),
    createdAt: Timestamp,
  })
  .openapi("PolicyBinding");
export type PolicyBindingResource = z.infer<typeof PolicyBindingSchema>;

export const PolicyBindingList = z
  .object({ items: z.array(PolicyBindingSchema), nextCursor: z.string().optional() })
  .openapi("PolicyBindingList");

export const CreatePolicyBindingBody = z
  .strictObject({
    policyId: z.string().min(1).max(64),
    version: z
      .union([z.number().int().min(1), z.literal("latest")])
      .optional()
      .describe("The policy version to apply: a number pins it; `latest` (the default) follows each new version"),
    mode: BindingMode.optional(),
    target: BindingTarget.optional(),
  })
  .openapi("CreatePolicyBinding");

export const DriftEntry = z
  .object({
    /**
     * `resource`: an existing resource the binding would not admit now; `pinned-version`: the
     * binding pins an older version; `egress-version`: a running sandbox's egress proxy last
     * decided under an older version of the binding's policy (`version` held, `latestVersion` in force).
     */
    reason: z.enum(["resource", "pinned-version", "egress-version"]),
    bindingId: z.string(),
    policyId: z.string(),
    version: z.number().int(),
    latestVersion: z.number().int().optional(),
    target: z.object({ kind: z.string(), id: z.string(), projectId: z.string().optional() }),
    ruleId: z.string().optional(),
    action: z.string().optional(),
    since: Timestamp,
  })
  .openapi("PolicyDriftEntry");
export const DriftReport = z
  .object({
    auditedAt: Timestamp.optional(),
    totals: z
      .object({
        entries: z.number().int().describe("Drift entries found"),
        resources: z.number().int().describe("Distinct resources the current bindings would not admit"),
        pinnedBindings: z.number().int(),
        egressProxies: z
          .number()
          .int()
          .optional()
          .describe("Running sandboxes whose egress proxy last decided under an older policy version"),
      })
      .describe("Counts over the whole report"),
    items: z.array(DriftEntry),
  })
  .openapi("PolicyDriftReport");
export type DriftReport = z.infer<typeof DriftReport>;

const bindingId = pathParam("bindingId", "pbd_01jc2x3y4z5a6b7c8d9e0f1g2h");
const tags = ["Governance"];

export const listOrgPolicyBindingsRoute = defineRoute(
  { service: "governance", access: "policies:read" },
  {
    operationId: "listOrgPolicyBindings",
    method: "get",
    path: "/v1/orgs/{orgId}/policy-bindings",
    tags,
    summary: "Organization policy bindings",
    description: "The organization's bindings: which policy (pinned version or latest) applies where, in which mode.",
    request: { params: GovOrgParams, query: GovPageQuery },
    responses: { 200: jsonBody(PolicyBindingList, "One page of bindings") },
  },
);
export const createOrgPolicyBindingRoute = defineRoute(
  { service: "governance", access: "policies:manage" },
  {
    operationId: "createOrgPolicyBinding",
    method: "post",
    path: "/v1/orgs/{orgId}/policy-bindings",
    tags,
    summary: "Bind an organization policy to the organization, some of its projects or selected resources",
    description:
      "Attaches an organization policy to the whole organization, to projects by id or label selector, or to resources by kind and selector, in `enforce` (default) or `dryrun` mode. Decisions change within seconds; audited.",
    request: { params: GovOrgParams, ...jsonRequest(CreatePolicyBindingBody) },
    responses: {
      201: jsonBody(PolicyBindingSchema, "Created"),
      ...limitedCreateConflict("bindings", BOUND_POLICY_SIZE_CONFLICT),
    },
  },
);
export const getPolicyBindingDriftRoute = defineRoute(
  { service: "governance", access: "policies:manage" },
  {
    operationId: "getPolicyBindingDrift",
    method: "get",
    path: "/v1/orgs/{orgId}/policy-bindings/drift",
    tags,
    summary: "Resources the current bindings would not admit, and bindings pinned to an older version",
    description:
      "A background audit (every 60 s, one replica at a time) of existing resources the current bindings would not admit, of running sandboxes whose egress proxy last decided under an older policy version, and of bindings pinned to an older version than the policy's latest; `refresh=true` recomputes now. Org admins only.",
    request: {
      params: GovOrgParams,
      query: z.object({
        refresh: z
          .enum(["true", "false"])
          .optional()
          .openapi({ param: { name: "refresh", in: "query" } }),
      }),
    },
    responses: { 200: jsonBody(DriftReport, "The last audit (or a fresh one with refresh=true)") },
  },
);
export const getOrgPolicyBindingRoute = defineRoute(
  { service: "governance", access: "policies:read" },
  {
    operationId: "getOrgPolicyBinding",
    method: "get",
    path: "/v1/orgs/{orgId}/policy-bindings/{bindingId}",
    tags,
    summary: "An organization policy binding",
    description: "One organization binding.",
    request: { params: GovOrgParams.extend({ bindingId }) },
    responses: { 200: jsonBody(PolicyBindingSchema, "The binding") },
  },
);
export const deleteOrgPolicyBindingRoute = defineRoute(
  { service: "governance", access: "policies:manage" },
  {
    operationId: "deleteOrgPolicyBinding",
    method: "delete",
    path: "/v1/orgs/{orgId}/policy-bindings/{bindingId}",
    tags,
    summary: "Remove an organization policy binding",
    description: "Removes the binding; what it forbade is allowed again within seconds; audited.",
    request: { params: GovOrgParams.extend({ bindingId }) },
    responses: { 204: NoContent },
  },
);

export const listProjectPolicyBindingsRoute = defineRoute(
  { service: "governance", access: "project:read" },
  {
    operationId: "listProjectPolicyBindings",
    method: "get",
    path: "/v1/projects/{projectId}/policy-bindings",
    tags,
    summary: "Project policy bindings",
    description: "The bindings made in this project.",
    request: { params: GovProjectParams, query: GovPageQuery },
    responses: { 200: jsonBody(PolicyBindingList, "One page of bindings") },
  },
);
export const createProjectPolicyBindingRoute = defineRoute(
  { service: "governance", access: "project-policies:manage" },
  {
    operationId: "createProjectPolicyBinding",
    method: "post",
    path: "/v1/projects/{projectId}/policy-bindings",
    tags,
    summary: "Bind a project policy, or adopt an organization policy, in this project",
    description:
      "Binds a project policy, or adopts an organization policy, for the whole project or resources selected in it, in `enforce` or `dryrun` mode.",
    request: { params: GovProjectParams, ...jsonRequest(CreatePolicyBindingBody) },
    responses: {
      201: jsonBody(PolicyBindingSchema, "Created"),
      ...limitedCreateConflict("bindings", BOUND_POLICY_SIZE_CONFLICT),
    },
  },
);
export const getProjectPolicyBindingRoute = defineRoute(
  { service: "governance", access: "project:read" },
  {
    operationId: "getProjectPolicyBinding",
    method: "get",
    path: "/v1/projects/{projectId}/policy-bindings/{bindingId}",
    tags,
    summary: "A project policy binding",
    description: "One project binding.",
    request: { params: GovProjectParams.extend({ bindingId }) },
    responses: { 200: jsonBody(PolicyBindingSchema, "The binding") },
  },
);
export const deleteProjectPolicyBindingRoute = defineRoute(
  { service: "governance", access: "project-policies:manage" },
  {
    operationId: "deleteProjectPolicyBinding",
    method: "delete",
    path: "/v1/projects/{projectId}/policy-bindings/{bindingId}",
    tags,
    summary: "Remove a project policy binding",
    description: "Removes the project binding.",
    request: { params: GovProjectParams.extend({ bindingId }) },
    responses: { 204: NoContent },
  },
);

export const bindingRoutes = [
  listOrgPolicyBindingsRoute,
  createOrgPolicyBindingRoute,
  getPolicyBindingDriftRoute,
  getOrgPolicyBindingRoute,
  deleteOrgPolicyBindingRoute,
  listProjectPolicyBindingsRoute,
  createProjectPolicyBindingRoute,
  getProjectPolicyBindingRoute,
  deleteProjectPolicyBindingRoute,
] as const;
