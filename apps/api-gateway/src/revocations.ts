import type { Authenticator } from "./authn/authenticator.ts";

/**
 * The operations after whose success credentials the gateway may hold resolved stop working, by
 * the path parameter that names what ended: a token, a session, a member's access, an
 * organization, a project, a sandbox. Nothing else is looked at: forgetting more than needed only
 * costs a lookup on the next request.
 */
const REVOKING: Readonly<Record<string, string>> = {
  revokeApiToken: "tokenId",
  revokeSession: "sessionId",
  removeMember: "userId",
  deleteOrganization: "orgId",
  deleteProject: "projectId",
  deleteSandboxToken: "id",
  deleteSandbox: "sandboxId",
};

/**
 * Once such an operation succeeded through this gateway, the credentials it ended are forgotten
 * at once, so the very next request with them is refused (the sign-out of a session does the same
 * by its secret).
 */
export function forgetRevoked(
  authenticator: Pick<Authenticator, "forgetRevoked">,
  operationId: string,
  params: Record<string, string>,
  status: number,
): void {
  if (status < 200 || status >= 300) return;
  const param = REVOKING[operationId];
  const id = param ? params[param] : undefined;
  if (id) authenticator.forgetRevoked(id);
}
