import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import type { Page } from "../api/types.ts";
import { ErrorNote, Loading, PageTitle } from "../components/ui.tsx";
import { missingOrgPermissions } from "../lib/permissions.ts";

const SAMPLE = 50;

function count(page: Page<unknown> | undefined): string {
  if (!page) return "…";
  return page.nextCursor ? `${page.items.length}+` : String(page.items.length);
}

export function OrgOverview() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const org = useQuery({ queryKey: ["org", orgId], queryFn: () => call("getOrganization", { path: { orgId } }) });
  const projects = useQuery({
    queryKey: ["projects", orgId, "sample"],
    queryFn: () => call("listProjects", { path: { orgId }, query: { limit: SAMPLE } }),
  });
  const members = useQuery({
    queryKey: ["members", orgId, "sample"],
    queryFn: () => call("listMembers", { path: { orgId }, query: { limit: SAMPLE } }),
  });
  if (org.isPending) return <Loading what="the organization" />;
  if (org.error) return <ErrorNote error={org.error} retry={() => void org.refetch()} />;
  const missing = role ? missingOrgPermissions(role) : [];
  return (
    <>
      <PageTitle>{org.data.name}</PageTitle>
      <dl className="mb-6 grid max-w-2xl grid-cols-3 gap-4">
        <div className="rounded-md border border-slate-200 p-3 dark:border-slate-700">
          <dt className="text-sm text-slate-600 dark:text-slate-300">Your role</dt>
          <dd className="text-lg font-semibold">{role ?? "…"}</dd>
        </div>
        <div className="rounded-md border border-slate-200 p-3 dark:border-slate-700">
          <dt className="text-sm text-slate-600 dark:text-slate-300">Projects</dt>
          <dd className="text-lg font-semibold">
            <Link to={`/orgs/${orgId}/projects`}>{count(projects.data)}</Link>
          </dd>
        </div>
        <div className="rounded-md border border-slate-200 p-3 dark:border-slate-700">
          <dt className="text-sm text-slate-600 dark:text-slate-300">Members</dt>
          <dd className="text-lg font-semibold">
            <Link to={`/orgs/${orgId}/members`}>{count(members.data)}</Link>
          </dd>
        </div>
      </dl>
      <ErrorNote error={projects.error ?? members.error} />
      <section aria-labelledby="limits" className="max-w-2xl">
        <h2 id="limits" className="mb-2 font-semibold">
          What your role may not do here
        </h2>
        {missing.length === 0 ? (
          <p className="text-sm">Nothing: as {role}, you hold every organization permission.</p>
        ) : (
          <ul className="list-disc pl-5 text-sm">
            {missing.map((m) => (
              <li key={m.permission}>
                {m.description} <span className="text-slate-600 dark:text-slate-300">(needs {m.needs})</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
