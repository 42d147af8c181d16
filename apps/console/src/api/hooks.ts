import { useQuery } from "@tanstack/react-query";
import type { OrgRole, ProjectRole } from "../lib/permissions.ts";
import { projectRoleOf } from "../lib/permissions.ts";
import { call } from "./client.ts";

export function useMe() {
  return useQuery({ queryKey: ["me"], queryFn: () => call("getMe"), staleTime: 30_000 });
}

/** The signed-in role in an organization (from /v1/auth/me), undefined while loading or when not a member. */
export function useOrgRole(orgId: string | undefined): OrgRole | undefined {
  const me = useMe();
  return me.data?.organizations.find((o) => o.id === orgId)?.role;
}

export function useProject(projectId: string | undefined) {
  return useQuery({
    queryKey: ["project", projectId],
    queryFn: () => call("getProject", { path: { projectId: projectId! } }),
    enabled: !!projectId,
  });
}

/** The signed-in role on a project: the project's own answer, or what the organization role implies. */
export function useProjectRole(projectId: string | undefined): { org?: OrgRole; project?: ProjectRole } {
  const project = useProject(projectId);
  const org = useOrgRole(project.data?.orgId);
  if (!project.data || !org) return {};
  return { org, project: projectRoleOf(org, project.data.role) };
}
