import { z } from "@hono/zod-openapi";
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

export const createOrganization = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "createOrganization",
    method: "post",
    path: "/v1/orgs",
    tags,
    summary: "Create an organization; the caller becomes its owner",
    request: jsonRequest(CreateOrganizationBody),
    responses: { 201: jsonBody(Organization, "Created") },
  },
);

export const listOrganizations = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "listOrganizations",
    method: "get",
    path: "/v1/orgs",
    tags,
    summary: "Organizations the caller belongs to",
    request: { query: PageQuery },
    responses: { 200: jsonBody(OrganizationList, "One page of organizations") },
  },
);

export const getOrganization = defineRoute(
  { service: "tenancy", access: "org:read" },
  {
    operationId: "getOrganization",
    method: "get",
    path: "/v1/orgs/{orgId}",
    tags,
    summary: "Get an organization",
    request: { params: OrgIdParams },
    responses: { 200: jsonBody(Organization, "The organization") },
  },
);

export const updateOrganization = defineRoute(
  { service: "tenancy", access: "org:update" },
  {
    operationId: "updateOrganization",
    method: "patch",
    path: "/v1/orgs/{orgId}",
    tags,
    summary: "Rename an organization",
    request: { params: OrgIdParams, ...jsonRequest(UpdateOrganizationBody) },
    responses: { 200: jsonBody(Organization, "Updated") },
  },
);

export const deleteOrganization = defineRoute(
  { service: "tenancy", access: "org:delete" },
  {
    operationId: "deleteOrganization",
    method: "delete",
    path: "/v1/orgs/{orgId}",
    tags,
    summary: "Delete an organization with its teams, projects, invitations and API tokens",
    request: { params: OrgIdParams },
    responses: { 204: NoContent },
  },
);

export const orgRoutes = [
  createOrganization,
  listOrganizations,
  getOrganization,
  updateOrganization,
  deleteOrganization,
] as const;
