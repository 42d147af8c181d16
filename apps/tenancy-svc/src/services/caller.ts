import type { OrgRole } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";

/** The caller's role in its organization (authorize finds one for every org-scoped permission it allows). */
export function orgRoleOf(caller: Caller): OrgRole {
  if (!caller.orgRole) throw new ProblemError("forbidden", { detail: "The caller has no role in this organization" });
  return caller.orgRole;
}
