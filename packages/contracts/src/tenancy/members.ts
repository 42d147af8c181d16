import { z } from "@hono/zod-openapi";
import { OrgRoleSchema } from "../common/roles.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import { jsonBody, jsonRequest, NoContent, OrgIdParams, PageQuery } from "./shared.ts";

export const Member = z
  .object({
    orgId: z.string(),
    userId: z.string(),
    role: OrgRoleSchema,
    email: z.string().optional(),
    displayName: z.string().optional(),
    joinedAt: Timestamp,
  })
  .openapi("Member");
export type Member = z.infer<typeof Member>;

export const MemberList = z.object({ items: z.array(Member), nextCursor: z.string().optional() }).openapi("MemberList");
export const UpdateMemberBody = z.strictObject({ role: OrgRoleSchema }).openapi("UpdateMember");

const MemberParams = OrgIdParams.extend({ userId: pathParam("userId", "usr_01jc2x3y4z5a6b7c8d9e0f1g2h") });
const tags = ["Members"];

export const listMembersRoute = defineRoute(
  { service: "tenancy", access: "members:read" },
  {
    operationId: "listMembers",
    description: "Every member of the organization with their role and when they joined, cursor-paged.",
    method: "get",
    path: "/v1/orgs/{orgId}/members",
    tags,
    summary: "Members of an organization with their roles",
    request: { params: OrgIdParams, query: PageQuery },
    responses: { 200: jsonBody(MemberList, "One page of members") },
  },
);

export const getMemberRoute = defineRoute(
  { service: "tenancy", access: "members:read" },
  {
    operationId: "getMember",
    description: "One member of the organization with their role.",
    method: "get",
    path: "/v1/orgs/{orgId}/members/{userId}",
    tags,
    summary: "One member",
    request: { params: MemberParams },
    responses: { 200: jsonBody(Member, "The member") },
  },
);

export const updateMemberRoute = defineRoute(
  { service: "tenancy", access: "members:manage" },
  {
    operationId: "updateMember",
    description: "Changes a member's role. An admin cannot act on an owner; demoting the last owner answers 409.",
    method: "patch",
    path: "/v1/orgs/{orgId}/members/{userId}",
    tags,
    summary: "Change a member's role (demoting the last owner answers 409)",
    request: { params: MemberParams, ...jsonRequest(UpdateMemberBody) },
    responses: { 200: jsonBody(Member, "Updated") },
  },
);

export const removeMemberRoute = defineRoute(
  { service: "tenancy", access: "members:manage" },
  {
    operationId: "removeMember",
    description:
      "Removes a member from the organization and its teams. An admin cannot remove an owner; removing the last owner answers 409.",
    method: "delete",
    path: "/v1/orgs/{orgId}/members/{userId}",
    tags,
    summary: "Remove a member (removing the last owner answers 409)",
    request: { params: MemberParams },
    responses: { 204: NoContent },
  },
);

export const memberRoutes = [listMembersRoute, getMemberRoute, updateMemberRoute, removeMemberRoute] as const;
