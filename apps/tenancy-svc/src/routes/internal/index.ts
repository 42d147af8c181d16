import {
  AuthorizeRequest,
  clusterJwtIssuer,
  ID_PREFIXES,
  type Principal,
  ResolveApiTokenRequest,
  ResolveOidcUserRequest,
  SignProjectTokenRequest,
  TENANCY_INTERNAL,
} from "@agentplane/contracts";
import { ProblemError, zodIssuesToFieldErrors } from "@agentplane/problem-details";
import { requirePrincipal, type ServiceApp, type ServiceContext } from "@agentplane/service-kit";
import { SignJWT } from "jose";
import type { z } from "zod";
import type { TenancyContext } from "../../context.ts";
import { currentSigningKey, publishedKeys, SIGNING_ALG } from "../../keys/signing-keys.ts";
import { resolveApiToken } from "../../services/api-tokens.ts";
import { resolveOidcUser, userPrincipal } from "../../services/users.ts";

/** Internal endpoints answer service identities only (the gateway and other services). */
function requireService(c: ServiceContext): Principal {
  const principal = requirePrincipal(c);
  if (principal.type !== "service") {
    throw new ProblemError("forbidden", { detail: "Internal endpoints are for services only" });
  }
  return principal;
}

async function parseJson<S extends z.ZodType>(c: ServiceContext, schema: S): Promise<z.infer<S>> {
  const raw: unknown = await c.req.json();
  const result = schema.safeParse(raw);
  if (!result.success) {
    throw new ProblemError("validation-failed", {
      detail: "The request is not valid",
      errors: zodIssuesToFieldErrors("body", result.error.issues),
    });
  }
  return result.data;
}

export function registerInternalRoutes(app: ServiceApp, ctx: TenancyContext): void {
  app.post(TENANCY_INTERNAL.resolveApiToken, async (c) => {
    requireService(c);
    const { token } = await parseJson(c, ResolveApiTokenRequest);
    const principal = await resolveApiToken(ctx.db, token);
    if (!principal) throw new ProblemError("unauthenticated", { detail: "The token is not valid" });
    return c.json({ principal }, 200);
  });

  app.post(TENANCY_INTERNAL.resolveOidcUser, async (c) => {
    requireService(c);
    const input = await parseJson(c, ResolveOidcUserRequest);
    const user = await resolveOidcUser(ctx.db, input);
    return c.json({ principal: userPrincipal(user) }, 200);
  });

  app.get(TENANCY_INTERNAL.projectVerificationKeys.replace("{projectId}", ":projectId"), async (c) => {
    requireService(c);
    const projectId = c.req.param("projectId") ?? "";
    const project = await ctx.db.selectFrom("projects").select("org_id").where("id", "=", projectId).executeTakeFirst();
    if (!project) throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
    return c.json({ orgId: project.org_id, keys: await publishedKeys(ctx.db, projectId) }, 200);
  });

  app.get(TENANCY_INTERNAL.resolveOrg.replace("{resourceId}", ":resourceId"), async (c) => {
    requireService(c);
    const id = c.req.param("resourceId") ?? "";
    const orgId = await orgOfResource(ctx, id);
    if (orgId === undefined) throw new ProblemError("not-found", { detail: `${id} was not found` });
    return c.json({ ...(orgId ? { orgId } : {}) }, 200);
  });

  // Platform-signed tokens (cluster JWTs, per-request tunnel JWTs): the private key never leaves tenancy.
  // The decrypted current key is kept 5 s per project (one is signed per proxied request); after a
  // rotation the previous key stays published, so tokens signed with it in that window verify.
  const signingKeys = new Map<string, { until: number; key: ReturnType<typeof currentSigningKey> }>();
  const signingKey = (projectId: string) => {
    const now = Date.now();
    const hit = signingKeys.get(projectId);
    if (hit && hit.until > now) return hit.key;
    const key = currentSigningKey(ctx.db, ctx.config.secretKey, projectId);
    if (signingKeys.size > 10_000) signingKeys.clear();
    signingKeys.set(projectId, { until: now + 5000, key });
    key.catch(() => signingKeys.delete(projectId));
    return key;
  };
  app.post(TENANCY_INTERNAL.signProjectToken.replace("{projectId}", ":projectId"), async (c) => {
    requireService(c);
    const projectId = c.req.param("projectId") ?? "";
    const input = await parseJson(c, SignProjectTokenRequest);
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

  app.post(TENANCY_INTERNAL.authorize, async (c) => {
    requireService(c);
    const request = await parseJson(c, AuthorizeRequest);
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
