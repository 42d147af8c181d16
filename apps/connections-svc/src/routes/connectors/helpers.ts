import type { Caller } from "@agentplane/service-kit";
import type { ToolViewer } from "../../connectors/services/visibility.ts";

type Roles = Pick<Caller, "orgRole" | "projectRole" | "teamIds">;

export function isProjectAdmin(authz: Roles): boolean {
  return authz.projectRole === "admin" || authz.orgRole === "owner" || authz.orgRole === "admin";
}

/** The caller as a viewer of tools: admin, and its teams from tenancy's authorization answer. */
export function toolViewer(authz: Roles): ToolViewer {
  return { projectAdmin: isProjectAdmin(authz), teamIds: authz.teamIds ?? [] };
}
