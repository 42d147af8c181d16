import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type RefObject, Suspense, useCallback, useEffect, useRef, useState } from "react";
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
  return <Frame />;
}

const NAV_ID = "console-nav";

/**
 * The header, the navigation and the page. Below 60rem (960 px) the navigation
 * is a drawer opened by the header's Menu button, so the page keeps the window's width.
 */
function Frame() {
  const location = useLocation();
  const [navOpen, setNavOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const closeNav = useCallback(() => {
    setNavOpen(false);
    menuButton.current?.focus();
  }, []);
  // Tabbing out of the open drawer closes it, leaving the focus where it went.
  const leaveNav = useCallback((to: Element | null) => {
    if (to !== menuButton.current) setNavOpen(false);
  }, []);
  // Another page: a focus left on the sidebar's link, or lost with the link that was followed, goes
  // to the page's content, as a page load would start there (the drawer gives it to Menu itself).
  const main = useRef<HTMLElement>(null);
  const shownPath = useRef(location.pathname);
  useEffect(() => {
    if (shownPath.current === location.pathname) return;
    shownPath.current = location.pathname;
    const at = document.activeElement;
    if (!at || at === document.body || at.closest(`#${NAV_ID}`)) main.current?.focus();
  }, [location.pathname]);
  return (
    <div className="flex min-h-screen flex-col">
      <Header menuButton={menuButton} navOpen={navOpen} onMenu={() => setNavOpen((open) => !open)} />
      <div className="flex flex-1 flex-col min-[60rem]:flex-row">
        <Nav open={navOpen} onClose={closeNav} onLeave={leaveNav} />
        <main
          id="main"
          ref={main}
          tabIndex={-1}
          className="min-w-0 flex-1 p-4 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-indigo-500 min-[60rem]:p-6"
        >
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

function Header({
  menuButton,
  navOpen,
  onMenu,
}: {
  menuButton: RefObject<HTMLButtonElement | null>;
  navOpen: boolean;
  onMenu: () => void;
}) {
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
      <Button
        ref={menuButton}
        className="min-[60rem]:hidden"
        aria-expanded={navOpen}
        aria-controls={NAV_ID}
        onClick={onMenu}
      >
        <span aria-hidden="true">☰</span> Menu
      </Button>
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

/**
 * The sidebar; on a narrow window a drawer over the page while `open`: Escape, a click beside it
 * or choosing a link closes it (`onClose` gives the focus back to the Menu button).
 */
function Nav({
  open,
  onClose,
  onLeave,
}: {
  open: boolean;
  onClose: () => void;
  onLeave: (to: Element | null) => void;
}) {
  const orgId = useCurrentOrg();
  const nav = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!open) return;
    nav.current?.querySelector<HTMLElement>("a")?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onClose();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open, onClose]);
  const link = ({ isActive }: { isActive: boolean }) =>
    `block rounded px-3 py-1.5 text-sm focus-visible:outline-2 focus-visible:outline-indigo-500 ${isActive ? "bg-indigo-100 font-medium text-indigo-900 dark:bg-indigo-900 dark:text-indigo-100" : "text-slate-800 hover:bg-slate-100 dark:text-slate-200 dark:hover:bg-slate-800"}`;
  return (
    <>
      {open ? (
        <div aria-hidden="true" className="fixed inset-0 z-30 bg-slate-900/40 min-[60rem]:hidden" onClick={onClose} />
      ) : null}
      <nav
        ref={nav}
        id={NAV_ID}
        aria-label="Console"
        className={`${open ? "fixed inset-y-0 left-0 z-40 block w-64 max-w-[85vw] overflow-y-auto bg-white shadow-xl dark:bg-slate-900" : "hidden"} shrink-0 border-r border-slate-200 p-3 min-[60rem]:static min-[60rem]:block min-[60rem]:w-52 min-[60rem]:bg-transparent min-[60rem]:shadow-none dark:border-slate-700`}
        onBlur={(e) => {
          const to = e.relatedTarget as Element | null;
          if (open && to && !e.currentTarget.contains(to)) onLeave(to);
        }}
      >
        {orgId ? (
          <ul className="flex flex-col gap-1">
            <li>
              <NavLink end to={`/orgs/${orgId}`} className={link} onClick={open ? onClose : undefined}>
                Overview
              </NavLink>
            </li>
            <li>
              <NavLink to={`/orgs/${orgId}/projects`} className={link} onClick={open ? onClose : undefined}>
                Projects
              </NavLink>
            </li>
            <li>
              <NavLink to={`/orgs/${orgId}/members`} className={link} onClick={open ? onClose : undefined}>
                Members
              </NavLink>
            </li>
            <li>
              <NavLink to={`/orgs/${orgId}/api-tokens`} className={link} onClick={open ? onClose : undefined}>
                API tokens
              </NavLink>
            </li>
            <li>
              <NavLink to={`/orgs/${orgId}/audit`} className={link} onClick={open ? onClose : undefined}>
                Audit trail
              </NavLink>
            </li>
            <li>
              <NavLink to={`/orgs/${orgId}/policies`} className={link} onClick={open ? onClose : undefined}>
                Policies
              </NavLink>
            </li>
            {[...peopleNavLinks(orgId), ...opsNavLinks(orgId)].map((l) => (
              <li key={l.to}>
                <NavLink to={l.to} className={link} onClick={open ? onClose : undefined}>
                  {l.label}
                </NavLink>
              </li>
            ))}
            <li>
              <NavLink to="/account/sessions" className={link} onClick={open ? onClose : undefined}>
                Sessions
              </NavLink>
            </li>
          </ul>
        ) : null}
      </nav>
    </>
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
