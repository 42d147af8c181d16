import { lazy } from "react";
import { createBrowserRouter, Navigate } from "react-router";
import { Layout, OrgHome } from "./components/layout.tsx";
import { opsRoutes } from "./ops-routes.tsx";
import { AuditPage } from "./pages/audit.tsx";
import { MembersPage } from "./pages/members.tsx";
import { OrgOverview } from "./pages/org-overview.tsx";
import { PoliciesPage } from "./pages/policies.tsx";
import { ProjectsPage } from "./pages/projects.tsx";
import { SessionsPage } from "./pages/sessions.tsx";
import { SignInPage } from "./pages/sign-in.tsx";
import { TokensPage } from "./pages/tokens.tsx";
import { peopleRoutes, publicPeopleRoutes } from "./people-routes.tsx";

// The pages with the terminal and the editor load on demand: they carry most of the weight.
const SandboxesPage = lazy(() => import("./pages/sandboxes.tsx"));
const SandboxDetailPage = lazy(() => import("./pages/sandbox-detail.tsx"));
const PolicyEditorPage = lazy(() => import("./pages/policy-editor.tsx"));

export function createConsoleRouter() {
  return createBrowserRouter([
    { path: "/sign-in", element: <SignInPage /> },
    ...publicPeopleRoutes,
    {
      element: <Layout />,
      children: [
        { path: "/", element: <OrgHome /> },
        { path: "/orgs/:orgId", element: <OrgOverview /> },
        { path: "/orgs/:orgId/projects", element: <ProjectsPage /> },
        { path: "/orgs/:orgId/members", element: <MembersPage /> },
        { path: "/orgs/:orgId/api-tokens", element: <TokensPage /> },
        { path: "/orgs/:orgId/audit", element: <AuditPage /> },
        { path: "/orgs/:orgId/policies", element: <PoliciesPage /> },
        { path: "/orgs/:orgId/policies/new", element: <PolicyEditorPage /> },
        { path: "/orgs/:orgId/policies/:policyId", element: <PolicyEditorPage /> },
        { path: "/projects/:projectId/sandboxes", element: <SandboxesPage /> },
        { path: "/projects/:projectId/sandboxes/:sandboxId", element: <SandboxDetailPage /> },
        { path: "/account/sessions", element: <SessionsPage /> },
        ...opsRoutes,
        ...peopleRoutes,
        { path: "*", element: <Navigate to="/" replace /> },
      ],
    },
  ]);
}
