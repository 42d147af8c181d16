import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Suspense, useEffect } from "react";
import { Navigate, NavLink, Outlet, useLocation, useNavigate, useParams } from "react-router";
import { useMe, useProject } from "../api/hooks.ts";
import { restoreSession, signOut } from "../api/session.ts";
import { isConnectionLost } from "../lib/connection.ts";
import { rememberProject } from "../lib/current-project.ts";
import { ApiError } from "../lib/problem.ts";
import { signInPath } from "../lib/sign-in-path.ts";
import { opsNavLinks } from "../ops-routes.tsx";
import { peopleNavLinks } from "../people-routes.tsx";
import { ConnectionBanner, PageErrorBoundary, RetryBanner } from "./connection-banner.tsx";
import { Button, ErrorNote, INPUT, Loading } from "./ui.tsx";

const LAST_ORG = "agentplane.org";

/** The signed-in frame: the session is checked first; without one, sign-in and back here afterwards. */
export function Layout() {
  const location = useLocation();
  const session = useQuery({ queryKey: ["session"], queryFn: restoreSession, retry: false, staleTime: Infinity });
  const here = `${location.pathname}${location.search}`;
  if (session.isPending) return <Loading what="your session" />;
  if (session.error instanceof ApiError && (session.error.status === 401 || session.error.status === 404)) {
    return <Navigate to={signInPath(here)} replace />;
  }
  if (session.error) {
    return (
      <main className="p-6">
        {isConnectionLost(session.error) ? (
          <RetryBanner onRetry={() => void session.refetch()} retrying={session.isFetching} />
        ) : (
          <ErrorNote error={session.error} retry={() => void session.refetch()} />
        )}
      </main>
    );
  }
  return (
    <div className="flex min-h-screen flex-col">
      <Header />
      <div className="flex flex-1 flex-col md:flex-row">
        <Nav />
        <main id="main" className="min-w-0 flex-1 p-4 md:p-6">
          <ConnectionBanner />
          <PageErrorBoundary resetKey={location.pathname}>
            <Suspense fallback={<Loading what="the page" />}>
              <Outlet />
            </Suspense>
          </PageErrorBoundary>
        </main>
      </div>
    </div>
  );
}

/** The organization a page is in: named by its path, the project's, or the one last used. */
function useCurrentOrg(): string | undefined {
  const params = useParams();
  const project = useProject(params.projectId);
  const orgId = params.orgId ?? project.data?.orgId;
  useEffect(() => {
    if (orgId) localStorage.setItem(LAST_ORG, orgId);
  }, [orgId]);
  // A project's own page (its sandboxes) makes it the one other project pages start from.
  const shown = project.data;
  useEffect(() => {
    if (shown) rememberProject(shown.orgId, shown.id);
  }, [shown]);
  return orgId ?? localStorage.getItem(LAST_ORG) ?? undefined;
}

function Header() {
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const orgId = useCurrentOrg();
  const orgs = me.data?.organizations ?? [];
  return (
    <header className="flex flex-wrap items-center gap-4 border-b border-slate-200 bg-white px-4 py-2 dark:border-slate-700 dark:bg-slate-900">
      <a href="#main" className="sr-only focus:not-sr-only">
        Skip to content
      </a>
      <span className="font-semibold">Agentplane</span>
      <label className="flex items-center gap-2 text-sm">
        Organization
        <select
          className={INPUT}
          value={orgs.some((o) => o.id === orgId) ? orgId : ""}
          onChange={(e) => navigate(`/orgs/${e.target.value}`)}
        >
          {orgs.length === 0 ? <option value="">No organization</option> : null}
          {orgs.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name} ({o.role})
            </option>
          ))}
        </select>
      </label>
      <span className="ml-auto text-sm">{me.data?.displayName ?? me.data?.email ?? ""}</span>
      <a href="/docs" className="text-sm">
        API reference
      </a>
      <Button
        onClick={async () => {
          await signOut().catch(() => {});
          queryClient.clear();
          navigate("/sign-in", { replace: true });
        }}
      >
        Sign out
      </Button>
    </header>
  );
}

function Nav() {
  const orgId = useCurrentOrg();
  const link = ({ isActive }: { isActive: boolean }) =>
    `block rounded px-3 py-1.5 text-sm ${isActive ? "bg-indigo-100 font-medium text-indigo-900 dark:bg-indigo-900 dark:text-indigo-100" : "text-slate-800 dark:text-slate-200"}`;
  return (
    <nav
      aria-label="Console"
      className="shrink-0 border-b border-slate-200 p-3 md:w-52 md:border-r md:border-b-0 dark:border-slate-700"
    >
      {orgId ? (
        <ul className="flex flex-wrap gap-1 md:flex-col">
          <li>
            <NavLink end to={`/orgs/${orgId}`} className={link}>
              Overview
            </NavLink>
          </li>
          <li>
            <NavLink to={`/orgs/${orgId}/projects`} className={link}>
              Projects
            </NavLink>
          </li>
          <li>
            <NavLink to={`/orgs/${orgId}/members`} className={link}>
              Members
            </NavLink>
          </li>
          <li>
            <NavLink to={`/orgs/${orgId}/api-tokens`} className={link}>
              API tokens
            </NavLink>
          </li>
          <li>
            <NavLink to={`/orgs/${orgId}/audit`} className={link}>
              Audit trail
            </NavLink>
          </li>
          <li>
            <NavLink to={`/orgs/${orgId}/policies`} className={link}>
              Policies
            </NavLink>
          </li>
          {[...peopleNavLinks(orgId), ...opsNavLinks(orgId)].map((l) => (
            <li key={l.to}>
              <NavLink to={l.to} className={link}>
                {l.label}
              </NavLink>
            </li>
          ))}
          <li>
            <NavLink to="/account/sessions" className={link}>
              Sessions
            </NavLink>
          </li>
        </ul>
      ) : null}
    </nav>
  );
}

/** `/`: the organization last used, else the first one. */
export function OrgHome() {
  const me = useMe();
  if (me.isPending) return <Loading what="your organizations" />;
  if (me.error) return <ErrorNote error={me.error} retry={() => void me.refetch()} />;
  const orgs = me.data.organizations;
  const last = localStorage.getItem(LAST_ORG);
  const target = orgs.find((o) => o.id === last) ?? orgs[0];
  if (!target) {
    return (
      <p>
        You belong to no organization yet. Create one with <code>POST /v1/orgs</code> or accept an invitation.
      </p>
    );
  }
  return <Navigate to={`/orgs/${target.id}`} replace />;
}
