import type { ContractRoute } from "../common/route.ts";
import { apiTokenRoutes } from "./api-tokens.ts";
import { deviceAuthRoutes } from "./device-auth.ts";
import { installationRoutes } from "./installation.ts";
import { invitationLinkRoutes } from "./invitation-links.ts";
import { invitationRoutes } from "./invitations.ts";
import { meRoutes } from "./me.ts";
import { memberRoutes } from "./members.ts";
import { orgRoutes } from "./orgs.ts";
import { projectRoutes } from "./projects.ts";
import { sessionRoutes } from "./sessions.ts";
import { teamRoutes } from "./teams.ts";

export * from "./api-tokens.ts";
export * from "./device-auth.ts";
export * from "./installation.ts";
export * from "./internal.ts";
export * from "./invitation-links.ts";
export * from "./invitations.ts";
export * from "./me.ts";
export * from "./members.ts";
export * from "./orgs.ts";
export * from "./projects.ts";
export * from "./sessions.ts";
export * from "./teams.ts";

export const tenancyRoutes: readonly ContractRoute[] = [
  ...meRoutes,
  ...sessionRoutes,
  ...deviceAuthRoutes,
  ...orgRoutes,
  ...memberRoutes,
  ...teamRoutes,
  ...projectRoutes,
  ...invitationRoutes,
  ...invitationLinkRoutes,
  ...apiTokenRoutes,
  ...installationRoutes,
];
