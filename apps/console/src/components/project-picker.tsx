import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { useSearchParams } from "react-router";
import { call } from "../api/client.ts";
import { defaultProject, rememberedProject, rememberProject } from "../lib/current-project.ts";
import { INPUT } from "./ui.tsx";

/**
 * The project a project-scoped page shows, kept in the URL (`?project=`) so links and back/forward
 * keep it; until one is chosen, the project last worked in (see `current-project.ts`), else the
 * organization's first. A project the organization does not have (a link from another one) is
 * replaced the same way.
 */
export function useChosenProject(orgId: string) {
  const [params, setParams] = useSearchParams();
  const projects = useQuery({
    queryKey: ["projects", orgId, "choices"],
    queryFn: () => call("listProjects", { path: { orgId }, query: { limit: 200 } }),
  });
  const items = projects.data?.items;
  const named = params.get("project") ?? undefined;
  const known = !!named && !!items?.some((p) => p.id === named);
  // Past the first 200 the list is not the whole organization: a project it lacks may still be there.
  const foreign = !!named && !!items && !known && !projects.data?.nextCursor;
  const chosen = foreign ? undefined : named;
  const fallback = defaultProject(items, rememberedProject(orgId));
  useEffect(() => {
    if (!chosen && fallback) setParams((p) => ({ ...Object.fromEntries(p), project: fallback }), { replace: true });
  }, [chosen, fallback, setParams]);
  useEffect(() => {
    if (chosen && known) rememberProject(orgId, chosen);
  }, [orgId, chosen, known]);
  const projectId = chosen ?? fallback;
  const choose = (id: string) => setParams({ project: id });
  return { projectId, projects, choose };
}

export function ProjectPicker({
  orgId,
  projectId,
  onChange,
}: {
  orgId: string;
  projectId: string | undefined;
  onChange: (projectId: string) => void;
}) {
  const projects = useQuery({
    queryKey: ["projects", orgId, "choices"],
    queryFn: () => call("listProjects", { path: { orgId }, query: { limit: 200 } }),
  });
  return (
    <label className="mb-4 flex items-center gap-2 text-sm">
      Project
      <select className={INPUT} value={projectId ?? ""} onChange={(e) => onChange(e.target.value)}>
        {projects.data?.items.length ? null : <option value="">No project yet</option>}
        {projects.data?.items.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  );
}
