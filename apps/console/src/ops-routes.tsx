import { lazy } from "react";
import type { RouteObject } from "react-router";

// Connections, inference, usage and installation load on demand (the usage page carries the charts).
const ConnectionsPage = lazy(() => import("./pages/connections.tsx"));
const ConnectorPage = lazy(() => import("./pages/connector.tsx"));
const InferencePage = lazy(() => import("./pages/inference.tsx"));
const UsagePage = lazy(() => import("./pages/usage.tsx"));
const InstallationPage = lazy(() => import("./pages/installation.tsx"));

export const opsRoutes: RouteObject[] = [
  { path: "/orgs/:orgId/connections", element: <ConnectionsPage /> },
  { path: "/connectors/:serverId", element: <ConnectorPage /> },
  { path: "/orgs/:orgId/inference", element: <InferencePage /> },
  { path: "/orgs/:orgId/usage", element: <UsagePage /> },
  { path: "/installation", element: <InstallationPage /> },
];

/** The navigation entries of these pages, for the organization shown. */
export function opsNavLinks(orgId: string): { to: string; label: string }[] {
  return [
    { to: `/orgs/${orgId}/connections`, label: "Connections" },
    { to: `/orgs/${orgId}/inference`, label: "Inference" },
    { to: `/orgs/${orgId}/usage`, label: "Usage and spend" },
    { to: "/installation", label: "Installation" },
  ];
}
