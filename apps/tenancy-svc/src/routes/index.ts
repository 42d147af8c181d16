import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../context.ts";
import { registerCreateApiToken } from "./api-tokens/create.ts";
import { registerGetApiToken } from "./api-tokens/get.ts";
import { registerListApiTokens } from "./api-tokens/list.ts";
import { registerListMyApiTokens } from "./api-tokens/list-mine.ts";
import { registerRevokeApiToken } from "./api-tokens/revoke.ts";
import { registerDevicePage } from "./device-auth/page.ts";
import { registerPollDeviceAuthorization } from "./device-auth/poll.ts";
import { registerStartDeviceAuthorization } from "./device-auth/start.ts";
import { registerDeviceSubmit } from "./device-auth/submit.ts";
import { registerActivateCallback } from "./installation/activate-callback.ts";
import { registerActivatePage } from "./installation/activate-page.ts";
import { registerActivateSubmit } from "./installation/activate-submit.ts";
import { registerGetInstallation } from "./installation/get.ts";
import { registerPollActivation } from "./installation/poll-activation.ts";
import { registerStartActivation } from "./installation/start-activation.ts";
import { registerInternalAuthorize } from "./internal/authorize.ts";
import { registerInternalProjectPrincipal } from "./internal/project-principal.ts";
import { registerInternalProjectVerificationKeys } from "./internal/project-verification-keys.ts";
import { registerInternalResolveApiToken } from "./internal/resolve-api-token.ts";
import { registerInternalResolveOidcUser } from "./internal/resolve-oidc-user.ts";
import { registerInternalResolveOrg } from "./internal/resolve-org.ts";
import { registerInternalResolveSession } from "./internal/resolve-session.ts";
import { registerInternalSignProjectToken } from "./internal/sign-project-token.ts";
import { registerAcceptInvitation } from "./invitations/accept.ts";
import { registerCreateInvitation } from "./invitations/create.ts";
import { registerDeclineInvitation } from "./invitations/decline.ts";
import { registerListInvitations } from "./invitations/list.ts";
import { registerListMyInvitations } from "./invitations/list-mine.ts";
import { registerPreviewInvitation } from "./invitations/preview.ts";
import { registerRedeemInvitation } from "./invitations/redeem.ts";
import { registerRevokeInvitation } from "./invitations/revoke.ts";
import { registerGetMe } from "./me/get.ts";
import { registerGetMember } from "./members/get.ts";
import { registerListMembers } from "./members/list.ts";
import { registerRemoveMember } from "./members/remove.ts";
import { registerUpdateMember } from "./members/update.ts";
import { registerCreateOrganization } from "./orgs/create.ts";
import { registerDeleteOrganization } from "./orgs/delete.ts";
import { registerGetOrganization } from "./orgs/get.ts";
import { registerListOrganizations } from "./orgs/list.ts";
import { registerUpdateOrganization } from "./orgs/update.ts";
import { registerCreateProject } from "./projects/create.ts";
import { registerDeleteProject } from "./projects/delete.ts";
import { registerGetProject } from "./projects/get.ts";
import { registerGetProjectJwks } from "./projects/jwks.ts";
import { registerListProjects } from "./projects/list.ts";
import { registerGetProjectPublicKey } from "./projects/public-key.ts";
import { registerRotateProjectKeys } from "./projects/rotate-keys.ts";
import { registerUpdateProject } from "./projects/update.ts";
import { registerCreateSession } from "./sessions/create.ts";
import { registerDeleteCurrentSession } from "./sessions/delete-current.ts";
import { registerGetCurrentSession } from "./sessions/get-current.ts";
import { registerListSessions } from "./sessions/list.ts";
import { registerConsoleOidcSignIn } from "./sessions/oidc-sign-in.ts";
import { registerRevokeSession } from "./sessions/revoke.ts";
import { registerAddTeamMember } from "./teams/add-member.ts";
import { registerCreateTeam } from "./teams/create.ts";
import { registerDeleteTeam } from "./teams/delete.ts";
import { registerGetTeam } from "./teams/get.ts";
import { registerGrantTeamProject } from "./teams/grant-project.ts";
import { registerListTeams } from "./teams/list.ts";
import { registerRemoveTeamMember } from "./teams/remove-member.ts";
import { registerRevokeTeamProject } from "./teams/revoke-project.ts";
import { registerUpdateTeam } from "./teams/update.ts";

const REGISTRATIONS: ((app: ServiceApp, ctx: TenancyContext) => void)[] = [
  registerGetMe,
  registerCreateSession,
  registerGetCurrentSession,
  registerDeleteCurrentSession,
  registerListSessions,
  registerRevokeSession,
  registerConsoleOidcSignIn,
  registerCreateOrganization,
  registerListOrganizations,
  registerGetOrganization,
  registerUpdateOrganization,
  registerDeleteOrganization,
  registerListMembers,
  registerGetMember,
  registerUpdateMember,
  registerRemoveMember,
  registerCreateTeam,
  registerListTeams,
  registerGetTeam,
  registerUpdateTeam,
  registerDeleteTeam,
  registerAddTeamMember,
  registerRemoveTeamMember,
  registerGrantTeamProject,
  registerRevokeTeamProject,
  registerCreateInvitation,
  registerListInvitations,
  registerRevokeInvitation,
  registerListMyInvitations,
  registerAcceptInvitation,
  registerDeclineInvitation,
  registerPreviewInvitation,
  registerRedeemInvitation,
  registerCreateProject,
  registerListProjects,
  registerGetProject,
  registerUpdateProject,
  registerDeleteProject,
  registerRotateProjectKeys,
  registerGetProjectPublicKey,
  registerGetProjectJwks,
  registerCreateApiToken,
  registerListApiTokens,
  registerListMyApiTokens,
  registerGetApiToken,
  registerRevokeApiToken,
  registerGetInstallation,
  registerStartActivation,
  registerPollActivation,
  registerActivatePage,
  registerActivateSubmit,
  registerActivateCallback,
  registerStartDeviceAuthorization,
  registerPollDeviceAuthorization,
  registerDevicePage,
  registerDeviceSubmit,
  registerInternalResolveApiToken,
  registerInternalResolveOidcUser,
  registerInternalResolveSession,
  registerInternalProjectVerificationKeys,
  registerInternalResolveOrg,
  registerInternalSignProjectToken,
  registerInternalProjectPrincipal,
  registerInternalAuthorize,
];

/** Every operation of tenancy-svc and its activation pages, one file each. */
export function registerRoutes(app: ServiceApp, ctx: TenancyContext): void {
  for (const register of REGISTRATIONS) register(app, ctx);
}
