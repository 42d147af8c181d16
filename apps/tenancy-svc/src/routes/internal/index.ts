import { clusterJwtIssuer, ID_PREFIXES, TENANCY_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import { SignJWT } from "jose";
import { LRUCache } from "lru-cache";
import type { TenancyContext } from "../../context.ts";
import { currentSigningKey, publishedKeys, SIGNING_ALG } from "../../keys/signing-keys.ts";
import { resolveApiToken } from "../../services/api-tokens.ts";
import { resolveOidcUser, userPrincipal } from "../../services/users.ts";

/** The internal endpoints (service identities only: the gateway and other services), by their contracts. */
export function registerInternalRoutes(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(R.resolveApiToken), async (c) => {
    const { token } = c.req.valid("json");
    const principal = await resolveApiToken(ctx.db, token);
    if (!principal) throw new ProblemError("unauthenticated", { detail: "The token is not valid" });
    return c.json({ principal }, 200);
  });

  app.openapi(internalRoute(R.resolveOidcUser), async (c) => {
    const input = c.req.valid("json");
    const user = await resolveOidcUser(ctx.db, input);
    return c.json({ principal: userPrincipal(user) }, 200);
  });

  app.openapi(internalRoute(R.projectVerificationKeys), async (c) => {
    const { projectId } = c.req.valid("param");
    const project = await ctx.db.selectFrom("projects").select("org_id").where("id", "=", projectId).executeTakeFirst();
    if (!project) throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
    return c.json({ orgId: project.org_id, keys: await publishedKeys(ctx.db, projectId) }, 200);
  });

  app.openapi(internalRoute(R.resolveOrg), async (c) => {
    const id = c.req.valid("param").resourceId;
    const orgId = await orgOfResource(ctx, id);
    if (orgId === undefined) throw new ProblemError("not-found", { detail: `${id} was not found` });
    return c.json({ ...(orgId ? { orgId } : {}) }, 200);
  });

  // Platform-signed tokens (cluster JWTs, per-request tunnel JWTs): the private key never leaves tenancy.
  // The decrypted current key is kept 5 s per project (one is signed per proxied request); after a
  // rotation the previous key stays published, so tokens signed with it in that window verify.
  const signingKeys = new LRUCache<string, ReturnType<typeof currentSigningKey>>({ max: 10_000, ttl: 5000 });
  const signingKey = (projectId: string) => {
    const hit = signingKeys.get(projectId);
    if (hit) return hit;
    const key = currentSigningKey(ctx.db, ctx.config.secretKey, projectId);
    signingKeys.set(projectId, key);
    key.catch(() => {
      if (signingKeys.peek(projectId) === key) signingKeys.delete(projectId);
    });
    return key;
  };
  app.openapi(internalRoute(R.signProjectToken), async (c) => {
    const { projectId } = c.req.valid("param");
    const input = c.req.valid("json");
    const key = await signingKey(projectId);
    if (!key) {
      signingKeys.delete(projectId);
      throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
    }
    const token = await new SignJWT(input.claims)
      .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid })
      .setIssuer(clusterJwtIssuer(projectId))
      .setSubject(input.subject)
      .setAudience(input.audience)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + input.ttlSeconds)
      .sign(key.privateKey);
    return c.json({ token, kid: key.kid }, 200);
  });

  app.openapi(internalRoute(R.authorize), async (c) => {
    const request = c.req.valid("json");
    return c.json(await ctx.authorizer.check(request), 200);
  });
}

/** `undefined`: no such resource; `null`: it exists and belongs to no organization. */
async function orgOfResource(ctx: TenancyContext, id: string): Promise<string | null | undefined> {
  const prefix = id.slice(0, id.indexOf("_"));
  const table = (
    {
      [ID_PREFIXES.project]: "projects",
      [ID_PREFIXES.team]: "teams",
      [ID_PREFIXES.apiToken]: "api_tokens",
      [ID_PREFIXES.invitation]: "invitations",
      [ID_PREFIXES.org]: "orgs",
    } as const
  )[prefix];
  if (!table) return undefined;
  if (table === "orgs") {
    const org = await ctx.db.selectFrom("orgs").select("id").where("id", "=", id).executeTakeFirst();
    return org?.id;
  }
  const row = await ctx.db.selectFrom(table).select("org_id").where("id", "=", id).executeTakeFirst();
  return row ? row.org_id : undefined;
}
