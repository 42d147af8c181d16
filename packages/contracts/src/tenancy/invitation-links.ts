import { z } from "@hono/zod-openapi";
import { OrgRoleSchema } from "../common/roles.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, ResourceName, Timestamp } from "../common/schemas.ts";
import { INVITATION_STATUSES, InvitationAcceptance } from "./invitations.ts";
import { OpenedSession } from "./sessions.ts";
import { jsonBody, jsonRequest } from "./shared.ts";

/**
 * An invitation's link: `<console>/invitations/<id>#token=<token>`. The token proves the link was
 * handed out by the organization (an HMAC of the invitation id under the installation's key), so
 * the invitee can open it before having any account. On an installation without an identity
 * provider, the link alone lets the invitee join by choosing a display name.
 */
const InvitationToken = z.string().min(20).max(200).describe("The token from the invitation's link");

export const InvitationPreview = z
  .object({
    id: z.string(),
    orgName: z.string().describe("The inviting organization's name"),
    email: z.string(),
    role: OrgRoleSchema,
    status: z.enum(INVITATION_STATUSES),
    expiresAt: Timestamp,
    signIn: z
      .enum(["oidc", "display-name"])
      .describe(
        "`oidc`: sign in with the identity provider, then accept; `display-name`: join by choosing a display name",
      ),
  })
  .openapi("InvitationPreview");
export type InvitationPreview = z.infer<typeof InvitationPreview>;

export const PreviewInvitationBody = z.strictObject({ token: InvitationToken }).openapi("PreviewInvitation");

export const RedeemInvitationBody = z
  .strictObject({
    token: InvitationToken,
    displayName: ResourceName.describe("How the new member is shown to others"),
  })
  .openapi("RedeemInvitation");

export const RedeemedInvitation = z
  .object({
    acceptance: InvitationAcceptance,
    session: OpenedSession.shape.session,
    csrfToken: z.string().describe("The session's CSRF token, sent back as x-csrf-token on mutating requests"),
  })
  .openapi("RedeemedInvitation");
export type RedeemedInvitation = z.infer<typeof RedeemedInvitation>;

const InvitationParams = z.object({
  invitationId: pathParam("invitationId", "inv_01jc2x3y4z5a6b7c8d9e0f1g2h"),
});
const tags = ["Invitations"];

export const previewInvitationRoute = defineRoute(
  { service: "tenancy", access: "public" },
  {
    operationId: "previewInvitation",
    description:
      "What an invitation's link offers (organization, email, role, status) and how to accept it here. Needs no token: the link's token is the proof; a wrong token answers 404.",
    method: "post",
    path: "/v1/invitations/{invitationId}/preview",
    tags,
    summary: "Read an invitation through its link",
    request: { params: InvitationParams, ...jsonRequest(PreviewInvitationBody) },
    responses: { 200: jsonBody(InvitationPreview, "The invitation") },
  },
);

export const redeemInvitationRoute = defineRoute(
  { service: "tenancy", access: "public" },
  {
    operationId: "redeemInvitation",
    description:
      "On an installation without an identity provider: the holder of the invitation's link joins as a new user with the invitation's email, the chosen display name and the invited role, and is signed in with a browser session (the answer sets the session cookie). With an identity provider this answers 409: sign in there and accept. An email that already has a user answers 409 too: that user signs in and accepts. Audited as `invitation.accepted`.",
    method: "post",
    path: "/v1/invitations/{invitationId}/redeem",
    tags,
    summary: "Join through an invitation's link as a new user",
    request: { params: InvitationParams, ...jsonRequest(RedeemInvitationBody) },
    responses: { 201: jsonBody(RedeemedInvitation, "Joined and signed in; Set-Cookie carries the session") },
  },
);

export const invitationLinkRoutes = [previewInvitationRoute, redeemInvitationRoute] as const;
