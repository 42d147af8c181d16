import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { OrgRoleSchema } from "../common/roles.ts";
import { defineRoute } from "../common/route.ts";
import { Timestamp } from "../common/schemas.ts";
import { jsonBody, jsonRequest, Name, NoContent, OrgIdParams, PageQuery } from "./shared.ts";

export const Organization = z
  .object({
    id: z.string(),
    name: z.string(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    /** The caller's role in the organization. */
    role: OrgRoleSchema.optional(),
  })
  .openapi("Organization");
export type Organization = z.infer<typeof Organization>;

export const CreateOrganizationBody = z.strictObject({ name: Name }).openapi("CreateOrganization");
export const UpdateOrganizationBody = z.strictObject({ name: Name.optional() }).openapi("UpdateOrganization");
export const OrganizationList = z
  .object({ items: z.array(Organization), nextCursor: z.string().optional() })
  .openapi("OrganizationList");

const tags = ["Organizations"];

export const createOrganizationRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "createOrganization",
    description:
      "Creates an organization and makes the caller its owner. Needs a user or an unrestricted owner token; the name need not be unique.",
    method: "post",
    path: "/v1/orgs",
    tags,
    summary: "Create an organization; the caller becomes its owner",
    request: jsonRequest(CreateOrganizationBody),
    responses: { 201: jsonBody(Organization, "Created"), ...limitedCreateConflict("organizations") },
  },
);

export const listOrganizationsRoute = defineRoute(
  { service: "tenancy", access: "authenticated", tokenScope: "org:read" },
  {
    operationId: "listOrganizations",
    description:
      "The organizations the caller is a member of, with the caller's role in each. A token bound to one organization sees only that one; a token restricted by `scopes` lists only when they include `org:read`.",
    method: "get",
    path: "/v1/orgs",
    tags,
    summary: "Organizations the caller belongs to",
    request: { query: PageQuery },
    responses: { 200: jsonBody(OrganizationList, "One page of organizations") },
  },
);

export const getOrganizationRoute = defineRoute(
  { service: "tenancy", access: "org:read" },
  {
    operationId: "getOrganization",
    description: "One organization. Members of another organization get 404, so ids do not leak across tenants.",
    method: "get",
    path: "/v1/orgs/{orgId}",
    tags,
    summary: "Get an organization",
    request: { params: OrgIdParams },
    responses: { 200: jsonBody(Organization, "The organization") },
  },
);

export const updateOrganizationRoute = defineRoute(
  { service: "tenancy", access: "org:update" },
  {
    operationId: "updateOrganization",
    description: "Renames the organization. Admins and owners only; audited.",
    method: "patch",
    path: "/v1/orgs/{orgId}",
    tags,
    summary: "Rename an organization",
    request: { params: OrgIdParams, ...jsonRequest(UpdateOrganizationBody) },
    responses: { 200: jsonBody(Organization, "Updated") },
  },
);

export const deleteOrganizationRoute = defineRoute(
  { service: "tenancy", access: "org:delete" },
  {
    operationId: "deleteOrganization",
    description:
      "Deletes the organization and everything it holds in tenancy: teams, projects and their keys, invitations and API tokens. Owners only; audited.",
    method: "delete",
    path: "/v1/orgs/{orgId}",
    tags,
    summary: "Delete an organization with its teams, projects, invitations and API tokens",
    request: { params: OrgIdParams },
    responses: { 204: NoContent },
  },
);

export const orgRoutes = [
  createOrganizationRoute,
  listOrganizationsRoute,
  getOrganizationRoute,
  updateOrganizationRoute,
  deleteOrganizationRoute,
] as const;
