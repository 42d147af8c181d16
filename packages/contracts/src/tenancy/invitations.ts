import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { OrgRoleSchema } from "../common/roles.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import { jsonBody, jsonRequest, NoContent, OrgIdParams, PageQuery } from "./shared.ts";

export const INVITATION_STATUSES = ["pending", "accepted", "declined", "revoked", "expired"] as const;

export const Invitation = z
  .object({
    id: z.string(),
    orgId: z.string(),
    /** Present on the invitee's own list. */
    orgName: z.string().optional().describe("The inviting organization's name"),
    email: z.string(),
    role: OrgRoleSchema,
    status: z.enum(INVITATION_STATUSES),
    invitedBy: z.string().describe("The user id of who invited"),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    acceptUrl: z
      .string()
      .optional()
      .describe(
        "The link to send the invitee (pending invitations, in the organization's list, to callers whose role is at least the invitation's): it opens the console, where the invitee accepts",
      ),
  })
  .openapi("Invitation");
export type Invitation = z.infer<typeof Invitation>;

export const InvitationList = z
  .object({ items: z.array(Invitation), nextCursor: z.string().optional() })
  .openapi("InvitationList");

export const CreateInvitationBody = z
  .strictObject({
    email: z.email().max(320),
    role: OrgRoleSchema.default("member"),
    /** Lifetime in seconds (default 7 days, at most 30 days). */
    expiresInSeconds: z
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .optional()
      .describe("Lifetime in seconds (default 7 days, at most 30 days)"),
  })
  .openapi("CreateInvitation");

export const InvitationAcceptance = z
  .object({ invitationId: z.string(), orgId: z.string(), userId: z.string(), role: OrgRoleSchema })
  .openapi("InvitationAcceptance");

const InvitationParams = z.object({
  invitationId: pathParam("invitationId", "inv_01jc2x3y4z5a6b7c8d9e0f1g2h"),
});
const OrgInvitationParams = OrgIdParams.merge(InvitationParams);
const tags = ["Invitations"];

export const createInvitationRoute = defineRoute(
  { service: "tenancy", access: "invitations:manage" },
  {
    operationId: "createInvitation",
    description:
      "Invites an email address to the organization with a role no higher than the caller's. The invitee accepts after signing in with that email.",
    method: "post",
    path: "/v1/orgs/{orgId}/invitations",
    tags,
    summary: "Invite someone by email with a role",
    request: { params: OrgIdParams, ...jsonRequest(CreateInvitationBody) },
    responses: {
      201: jsonBody(Invitation, "Created"),
      ...limitedCreateConflict("invitations", "The email is a member already or has a pending invitation"),
    },
  },
);

export const listInvitationsRoute = defineRoute(
  { service: "tenancy", access: "invitations:manage" },
  {
    operationId: "listInvitations",
    description: "The organization's invitations in every status (pending, accepted, declined, revoked, expired).",
    method: "get",
    path: "/v1/orgs/{orgId}/invitations",
    tags,
    summary: "Invitations of an organization (every status)",
    request: { params: OrgIdParams, query: PageQuery },
    responses: { 200: jsonBody(InvitationList, "One page of invitations") },
  },
);

export const revokeInvitationRoute = defineRoute(
  { service: "tenancy", access: "invitations:manage" },
  {
    operationId: "revokeInvitation",
    description:
      "Revokes a pending invitation; accepting it afterwards answers 410. An invitation with a role above the caller's answers 403.",
    method: "delete",
    path: "/v1/orgs/{orgId}/invitations/{invitationId}",
    tags,
    summary: "Revoke a pending invitation",
    request: { params: OrgInvitationParams },
    responses: { 204: NoContent },
  },
);

export const listMyInvitationsRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "listMyInvitations",
    description:
      "Pending invitations addressed to the caller's verified email, across organizations (a token bound to an organization sees only that organization's).",
    method: "get",
    path: "/v1/invitations",
    tags,
    summary: "Pending invitations addressed to the caller's email",
    responses: { 200: jsonBody(InvitationList, "Pending invitations") },
  },
);

/**
 * What answering an invitation may carry: the token of its link. A user whose address no identity
 * provider vouches for (one made by an invitation link, whose address its sender typed) answers
 * only with it; a user signed in with a verified address needs none.
 */
export const AnswerInvitationBody = z
  .strictObject({
    token: z
      .string()
      .min(20)
      .max(200)
      .optional()
      .describe("The token from the invitation's link (needed when no identity provider vouches for your email)"),
  })
  .openapi("AnswerInvitation");
const answerRequest = {
  body: { required: false, content: { "application/json": { schema: AnswerInvitationBody } } },
};

export const acceptInvitationRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "acceptInvitation",
    description:
      "The caller joins the organization with the invitation's role. The invitation must be addressed to the caller's verified email, or the body must carry the token of its link (a user made by an invitation link has no verified email); otherwise it answers 404. Expired or revoked invitations answer 410; a token bound to another organization answers 403.",
    method: "post",
    path: "/v1/invitations/{invitationId}/accept",
    tags,
    summary: "Accept an invitation: the caller joins the organization with its role",
    request: { params: InvitationParams, ...answerRequest },
    responses: { 200: jsonBody(InvitationAcceptance, "Joined") },
  },
);

export const declineInvitationRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "declineInvitation",
    description:
      "Declines the invitation; it can no longer be accepted. As for accepting, the caller's verified email or the token of the invitation's link proves it is the caller's to answer. A token bound to another organization answers 403.",
    method: "post",
    path: "/v1/invitations/{invitationId}/decline",
    tags,
    summary: "Decline an invitation",
    request: { params: InvitationParams, ...answerRequest },
    responses: { 204: NoContent },
  },
);

export const invitationRoutes = [
  createInvitationRoute,
  listInvitationsRoute,
  revokeInvitationRoute,
  listMyInvitationsRoute,
  acceptInvitationRoute,
  declineInvitationRoute,
] as const;
