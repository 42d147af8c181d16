import { z } from "@hono/zod-openapi";
import { PrincipalSchema } from "../common/identity.ts";
import { OrgRoleSchema, ProjectRoleSchema } from "../common/roles.ts";

/**
 * Internal tenancy endpoints, called by the gateway and by other services with a service
 * identity. They are not part of `/v1` and the gateway never routes to them.
 */
export const TENANCY_INTERNAL = {
  /** POST: resolve an opaque API token to its principal; 401 problem when unknown, revoked or expired. */
  resolveApiToken: "/internal/authn/api-token",
  /** POST: find or provision the user behind a verified OIDC identity. */
  resolveOidcUser: "/internal/authn/oidc-user",
  /** GET: published verification keys of a project (JWKS), for cluster JWT verification. */
  projectVerificationKeys: "/internal/projects/{projectId}/verification-keys",
  /** POST: authorization decision for a principal, a permission and an org or project. */
  authorize: "/internal/authz/check",
  /** POST SignProjectTokenRequest → SignProjectTokenResponse: an ES256 JWT signed with the project's current key. */
  signProjectToken: "/internal/projects/{projectId}/sign",
  /** GET → ResolveOrgResponse: the organization a tenancy resource (project, team, API token, invitation) belongs to. */
  resolveOrg: "/internal/org-of/{resourceId}",
} as const;

/**
 * The organization of a resource, by its prefixed id (`prj_`, `team_`, `tok_`, `inv_`), for the
 * gateway's audit records of requests that name no organization. 404 problem when unknown; an API
 * token not bound to an organization answers without `orgId`.
 */
export const ResolveOrgResponse = z.object({ orgId: z.string().optional() });
export type ResolveOrgResponse = z.infer<typeof ResolveOrgResponse>;

export const ResolveApiTokenRequest = z.object({ token: z.string() });
export const ResolveOidcUserRequest = z.object({
  issuer: z.string(),
  subject: z.string(),
  email: z.string().optional(),
  name: z.string().optional(),
});
export const ResolvedPrincipal = z.object({ principal: PrincipalSchema });

export const AuthorizeRequest = z.object({
  principal: PrincipalSchema,
  permission: z.string(),
  orgId: z.string().optional(),
  projectId: z.string().optional(),
});

export const AuthorizeResponse = z.object({
  /** `allowed`; `forbidden` (visible but role too low → 403); `not_found` (not visible → 404). */
  decision: z.enum(["allowed", "forbidden", "not_found"]),
  orgId: z.string().optional(),
  projectId: z.string().optional(),
  orgRole: OrgRoleSchema.optional(),
  projectRole: ProjectRoleSchema.optional(),
  /**
   * Project decisions: the teams of the organization the acting user belongs to (an API token's
   * creator), for resources restricted to teams such as connector tools. Absent for other principals.
   */
  teamIds: z.array(z.string()).optional(),
});
export type AuthorizeRequest = z.infer<typeof AuthorizeRequest>;
export type AuthorizeResponse = z.infer<typeof AuthorizeResponse>;

export const VerificationKeysResponse = z.object({
  orgId: z.string(),
  keys: z.array(z.record(z.string(), z.unknown())),
});

/**
 * Platform-signed tokens (cluster JWTs, per-request tunnel JWTs): `iss` is the project's cluster
 * issuer, `kid` the current key; the caller names subject, audience, lifetime and extra claims.
 */
export const SignProjectTokenRequest = z.object({
  subject: z.string().min(1).max(200),
  audience: z.string().min(1).max(200),
  ttlSeconds: z.number().int().min(1).max(86_400),
  claims: z.record(z.string(), z.unknown()).default({}),
});
export type SignProjectTokenRequest = z.input<typeof SignProjectTokenRequest>;
export const SignProjectTokenResponse = z.object({ token: z.string(), kid: z.string() });
