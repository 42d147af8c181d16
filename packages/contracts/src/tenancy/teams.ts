import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { ProjectRoleSchema } from "../common/roles.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import { Description, jsonBody, jsonRequest, Name, NoContent, OrgIdParams, PageQuery, TeamIdParams } from "./shared.ts";

export const TeamProjectGrant = z
  .object({ projectId: z.string(), role: ProjectRoleSchema })
  .openapi("TeamProjectGrant");

export const Team = z
  .object({
    id: z.string(),
    orgId: z.string(),
    name: z.string(),
    description: z.string().optional(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    /** Present on `getTeam`. */
    members: z
      .array(z.object({ userId: z.string(), addedAt: Timestamp }))
      .optional()
      .describe("The team's members (on reads of one team)"),
    /** Present on `getTeam`. */
    projects: z
      .array(TeamProjectGrant)
      .optional()
      .describe("The projects the team has a role on (on reads of one team)"),
  })
  .openapi("Team");
export type Team = z.infer<typeof Team>;

export const TeamList = z.object({ items: z.array(Team), nextCursor: z.string().optional() }).openapi("TeamList");
export const CreateTeamBody = z.strictObject({ name: Name, description: Description.optional() }).openapi("CreateTeam");
export const UpdateTeamBody = z
  .strictObject({ name: Name.optional(), description: Description.optional() })
  .openapi("UpdateTeam");
export const GrantTeamProjectBody = z.strictObject({ role: ProjectRoleSchema }).openapi("GrantTeamProject");
export const TeamMembership = z.object({ teamId: z.string(), userId: z.string() }).openapi("TeamMembership");
export const TeamProjectAccess = z
  .object({ teamId: z.string(), projectId: z.string(), role: ProjectRoleSchema })
  .openapi("TeamProjectAccess");

const TeamMemberParams = TeamIdParams.extend({ userId: pathParam("userId", "usr_01jc2x3y4z5a6b7c8d9e0f1g2h") });
const TeamProjectParams = TeamIdParams.extend({
  projectId: pathParam("projectId", "prj_01jc2x3y4z5a6b7c8d9e0f1g2h"),
});
const tags = ["Teams"];

export const createTeamRoute = defineRoute(
  { service: "tenancy", access: "teams:manage" },
  {
    operationId: "createTeam",
    description: "Creates a team in the organization. Teams carry project roles to their members.",
    method: "post",
    path: "/v1/orgs/{orgId}/teams",
    tags,
    summary: "Create a team",
    request: { params: OrgIdParams, ...jsonRequest(CreateTeamBody) },
    responses: { 201: jsonBody(Team, "Created"), ...limitedCreateConflict("teams") },
  },
);

export const listTeamsRoute = defineRoute(
  { service: "tenancy", access: "teams:read" },
  {
    operationId: "listTeams",
    description: "The organization's teams, cursor-paged.",
    method: "get",
    path: "/v1/orgs/{orgId}/teams",
    tags,
    summary: "Teams of an organization",
    request: { params: OrgIdParams, query: PageQuery },
    responses: { 200: jsonBody(TeamList, "One page of teams") },
  },
);

export const getTeamRoute = defineRoute(
  { service: "tenancy", access: "teams:read" },
  {
    operationId: "getTeam",
    description: "A team with its members and the projects it has a role on.",
    method: "get",
    path: "/v1/teams/{teamId}",
    tags,
    summary: "A team with its members and project access",
    request: { params: TeamIdParams },
    responses: { 200: jsonBody(Team, "The team") },
  },
);

export const updateTeamRoute = defineRoute(
  { service: "tenancy", access: "teams:manage" },
  {
    operationId: "updateTeam",
    description: "Changes a team's name or description.",
    method: "patch",
    path: "/v1/teams/{teamId}",
    tags,
    summary: "Rename or describe a team",
    request: { params: TeamIdParams, ...jsonRequest(UpdateTeamBody) },
    responses: { 200: jsonBody(Team, "Updated") },
  },
);

export const deleteTeamRoute = defineRoute(
  { service: "tenancy", access: "teams:manage" },
  {
    operationId: "deleteTeam",
    description: "Deletes a team; its members lose the project roles it gave them but keep their organization role.",
    method: "delete",
    path: "/v1/teams/{teamId}",
    tags,
    summary: "Delete a team (its members keep their organization role)",
    request: { params: TeamIdParams },
    responses: { 204: NoContent },
  },
);

export const addTeamMemberRoute = defineRoute(
  { service: "tenancy", access: "teams:manage" },
  {
    operationId: "addTeamMember",
    description: "Adds a member of the organization to the team. Adding someone already in it changes nothing.",
    method: "put",
    path: "/v1/teams/{teamId}/members/{userId}",
    tags,
    summary: "Add a member of the organization to the team (idempotent)",
    request: { params: TeamMemberParams },
    responses: { 200: jsonBody(TeamMembership, "The membership") },
  },
);

export const removeTeamMemberRoute = defineRoute(
  { service: "tenancy", access: "teams:manage" },
  {
    operationId: "removeTeamMember",
    description: "Removes a user from the team; the project roles the team gave them end at once.",
    method: "delete",
    path: "/v1/teams/{teamId}/members/{userId}",
    tags,
    summary: "Remove a user from the team",
    request: { params: TeamMemberParams },
    responses: { 204: NoContent },
  },
);

export const grantTeamProjectRoute = defineRoute(
  { service: "tenancy", access: "teams:manage" },
  {
    operationId: "grantTeamProject",
    description:
      "Gives the team a project role (`admin`, `developer` or `viewer`) on a project of the same organization, replacing an earlier grant.",
    method: "put",
    path: "/v1/teams/{teamId}/projects/{projectId}",
    tags,
    summary: "Give the team a role on a project of the organization (replaces an earlier grant)",
    request: { params: TeamProjectParams, ...jsonRequest(GrantTeamProjectBody) },
    responses: { 200: jsonBody(TeamProjectAccess, "The grant") },
  },
);

export const revokeTeamProjectRoute = defineRoute(
  { service: "tenancy", access: "teams:manage" },
  {
    operationId: "revokeTeamProject",
    description: "Ends the team's role on the project.",
    method: "delete",
    path: "/v1/teams/{teamId}/projects/{projectId}",
    tags,
    summary: "Take the team's access to a project away",
    request: { params: TeamProjectParams },
    responses: { 204: NoContent },
  },
);

export const teamRoutes = [
  createTeamRoute,
  listTeamsRoute,
  getTeamRoute,
  updateTeamRoute,
  deleteTeamRoute,
  addTeamMemberRoute,
  removeTeamMemberRoute,
  grantTeamProjectRoute,
  revokeTeamProjectRoute,
] as const;
