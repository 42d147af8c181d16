import type { Permission } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { Requester } from "@agentplane/service-kit";

/**
 * For routes that decide without `authorize` (the caller's own things, open to every role): a
 * token restricted by scopes reaches them only when its scopes name the permission that governs
 * them; 403 naming it otherwise. What its role allows is then decided as for any token.
 */
export function requireTokenScope(requester: Requester, permission: Permission): void {
  const { scopes } = requester.principal;
  if (!scopes || scopes.includes(permission)) return;
  throw new ProblemError("forbidden", {
    detail: `This token is restricted to ${scopes.join(", ")}; this needs ${permission}`,
  });
}
