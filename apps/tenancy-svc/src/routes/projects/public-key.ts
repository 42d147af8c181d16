import { getProjectPublicKeyRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { currentPublicKey } from "../../keys/signing-keys.ts";
import { iso } from "../../services/serialize.ts";

export function registerGetProjectPublicKey(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getProjectPublicKeyRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "project:keys:read", { projectId });
    const key = await currentPublicKey(ctx.db, projectId);
    if (!key) throw new ProblemError("not-found", { detail: `Project ${projectId} has no signing key` });
    return c.json(
      { projectId, kid: key.kid, alg: "ES256" as const, pem: key.pem, jwk: key.jwk, createdAt: iso(key.createdAt) },
      200,
    );
  });
}
