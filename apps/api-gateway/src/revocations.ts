import { randomUUID } from "node:crypto";
import { CREDENTIALS_REVOKED, type CredentialsRevoked, CredentialsRevokedSchema } from "@agentplane/contracts";
import type { Bus } from "@agentplane/events";
import type { Logger } from "@agentplane/service-kit";
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

/**
 * Tells every other gateway replica on the bus what a revocation through this one made it forget,
 * and forgets what theirs did, so a revoked token or a deleted session stops working on every
 * replica with the next request, not when each replica's cache of it ends. A notice lost (the bus
 * down, a replica reconnecting) leaves that cache's short lifetime as the bound.
 */
export function shareRevocations(
  authenticator: Pick<Authenticator, "onForget" | "forgetHere">,
  bus: Bus,
  logger?: Logger,
): { close(): void } {
  const from = `gw-${randomUUID()}`;
  authenticator.onForget((forgotten) => {
    const notice: CredentialsRevoked = { from, ...forgotten };
    bus.notify(CREDENTIALS_REVOKED, notice).catch((err: unknown) => {
      logger?.warn({ err: (err as Error).message }, "revocation not told to the other gateway replicas");
    });
  });
  const listening = bus
    .listen<unknown>(CREDENTIALS_REVOKED, (event) => {
      const parsed = CredentialsRevokedSchema.safeParse(event.data);
      if (!parsed.success || parsed.data.from === from) return;
      const { id, sessionKey } = parsed.data;
      authenticator.forgetHere(id !== undefined ? { id } : { sessionKey: sessionKey as string });
    })
    .catch((err: unknown) => {
      logger?.warn({ err: (err as Error).message }, "not listening for other gateway replicas' revocations");
      return undefined;
    });
  return {
    close() {
      authenticator.onForget(undefined);
      void listening.then((subscription) => subscription?.close());
    },
  };
}
