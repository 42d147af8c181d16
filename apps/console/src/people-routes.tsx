import { lazy } from "react";
import type { RouteObject } from "react-router";

// People and governance pages beyond the first ones, loaded on demand.
const InvitationsPage = lazy(() => import("./pages/invitations.tsx"));
const TeamsPage = lazy(() => import("./pages/teams.tsx"));
const CredentialsPage = lazy(() => import("./pages/credentials.tsx"));
const DriftPage = lazy(() => import("./pages/drift.tsx"));
const DecisionCheckPage = lazy(() => import("./pages/decision-check.tsx"));
const AcceptInvitationPage = lazy(() => import("./pages/accept-invitation.tsx"));

/** Pages inside the signed-in frame. */
export const peopleRoutes: RouteObject[] = [
  { path: "/orgs/:orgId/invitations", element: <InvitationsPage /> },
  { path: "/orgs/:orgId/teams", element: <TeamsPage /> },
  { path: "/orgs/:orgId/credentials", element: <CredentialsPage /> },
  { path: "/orgs/:orgId/drift", element: <DriftPage /> },
  { path: "/orgs/:orgId/decisions", element: <DecisionCheckPage /> },
];

/** Pages a person opens before having a session: an invitation's link. */
export const publicPeopleRoutes: RouteObject[] = [
  { path: "/invitations/:invitationId", element: <AcceptInvitationPage /> },
];

/** Paths where a 401 is expected (no session yet) rather than a session that ended. */
export function isPublicPath(pathname: string): boolean {
  return pathname === "/sign-in" || pathname.startsWith("/invitations/");
}

/** The navigation entries of these pages, for the organization shown. */
export function peopleNavLinks(orgId: string): { to: string; label: string }[] {
  return [
    { to: `/orgs/${orgId}/invitations`, label: "Invitations" },
    { to: `/orgs/${orgId}/teams`, label: "Teams" },
    { to: `/orgs/${orgId}/credentials`, label: "Credentials" },
    { to: `/orgs/${orgId}/drift`, label: "Policy drift" },
    { to: `/orgs/${orgId}/decisions`, label: "Would this be allowed?" },
  ];
}
