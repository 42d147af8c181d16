import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { useSearchParams } from "react-router";
import { call } from "../api/client.ts";
import { INPUT } from "./ui.tsx";

/**
 * The project a project-scoped page shows, kept in the URL (`?project=`) so links and back/forward
 * keep it; the organization's first project until one is chosen.
 */
export function useChosenProject(orgId: string) {
  const [params, setParams] = useSearchParams();
  const projects = useQuery({
    queryKey: ["projects", orgId, "choices"],
    queryFn: () => call("listProjects", { path: { orgId }, query: { limit: 200 } }),
  });
  const chosen = params.get("project") ?? undefined;
  const first = projects.data?.items[0]?.id;
  useEffect(() => {
    if (!chosen && first) setParams((p) => ({ ...Object.fromEntries(p), project: first }), { replace: true });
  }, [chosen, first, setParams]);
  const projectId = chosen ?? first;
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
