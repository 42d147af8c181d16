import { z } from "@hono/zod-openapi";
import { PrincipalSchema } from "../common/identity.ts";
import { defineInternalRoute, type InternalRoute, jsonBody, jsonOk } from "../common/internal-route.ts";
import { OrgRoleSchema, ProjectRoleSchema } from "../common/roles.ts";

/**
 * Bus topic: a project's labels as they are now (`labels: null` once it is deleted), published by
 * tenancy with the change; governance keeps them for bindings that select projects by label.
 */
export const PROJECT_LABELS_TOPIC = "tenancy.project-labels";
export interface ProjectLabelsChanged {
  orgId: string;
  projectId: string;
  labels: Record<string, string> | null;
}

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
  /** The address the token carries without vouching for it: a stored address equal to it is removed. */
  unverifiedEmail: z.string().max(320).optional(),
  name: z.string().optional(),
});
export const ResolvedPrincipal = z.object({
  principal: PrincipalSchema,
  /** When the credential stops working (an API token's expiry): no cache may keep it longer. */
  expiresAt: z.string().optional(),
});
export const ResolveSessionRequest = z.object({ secret: z.string().max(200) });
/** A session's principal and the CSRF token its mutating requests must carry. */
export const ResolvedSession = z.object({
  principal: PrincipalSchema,
  csrfToken: z.string(),
  /** When the session stops working (its own expiry, or its token's if sooner): no cache may keep it longer. */
  expiresAt: z.string().optional(),
  /**
   * The sessions this one was opened from, its parent first: revoking any of them ends this one
   * too, so a cache files the session under each of their ids.
   */
  ancestorSessionIds: z.array(z.string()).optional(),
});
export type ResolvedSession = z.infer<typeof ResolvedSession>;

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

const ProjectIdParam = z.object({ projectId: z.string().min(1).max(200) });
/** A user or API token named by id, looked up as a principal of one project. */
export const ProjectPrincipalRequest = z.object({
  type: z.enum(["user", "api_token"]),
  id: z.string().min(1).max(200),
});

const tenancy = { service: "tenancy" } as const;

export const internalResolveApiTokenRoute = defineInternalRoute(tenancy, {
  method: "post",
  path: "/internal/authn/api-token",
  operationId: "internalResolveApiToken",
  summary: "Resolve an API token",
  description: "The principal of an opaque API token; 401 problem when unknown, revoked or expired.",
  request: jsonBody(ResolveApiTokenRequest, "The token as presented"),
  responses: jsonOk(ResolvedPrincipal, "The token's principal"),
});

export const internalResolveSessionRoute = defineInternalRoute(tenancy, {
  method: "post",
  path: "/internal/authn/session",
  operationId: "internalResolveSession",
  summary: "Resolve a browser session",
  description: "The principal and CSRF token of an open browser session; 401 problem when unknown, revoked or expired.",
  request: jsonBody(ResolveSessionRequest, "The session cookie's value"),
  responses: jsonOk(ResolvedSession, "The session's principal"),
});

export const internalResolveOidcUserRoute = defineInternalRoute(tenancy, {
  method: "post",
  path: "/internal/authn/oidc-user",
  operationId: "internalResolveOidcUser",
  summary: "Find or provision an OIDC user",
  description: "The user behind a verified OIDC identity, provisioned on first sight.",
  request: jsonBody(ResolveOidcUserRequest, "The verified identity"),
  responses: jsonOk(ResolvedPrincipal, "The user's principal"),
});

export const internalProjectVerificationKeysRoute = defineInternalRoute(tenancy, {
  method: "get",
  path: "/internal/projects/{projectId}/verification-keys",
  operationId: "internalProjectVerificationKeys",
  summary: "A project's verification keys",
  description: "The published JWKS of a project, for cluster JWT verification; 404 problem when unknown.",
  request: { params: ProjectIdParam },
  responses: jsonOk(VerificationKeysResponse, "The project's organization and keys"),
});

export const internalResolveOrgRoute = defineInternalRoute(tenancy, {
  method: "get",
  path: "/internal/org-of/{resourceId}",
  operationId: "internalResolveOrg",
  summary: "The organization of a resource",
  description: "The organization a project, team, API token or invitation belongs to; 404 problem when unknown.",
  request: { params: z.object({ resourceId: z.string().min(1).max(200) }) },
  responses: jsonOk(ResolveOrgResponse, "The organization, absent for a token bound to none"),
});

export const internalSignProjectTokenRoute = defineInternalRoute(tenancy, {
  method: "post",
  path: "/internal/projects/{projectId}/sign",
  operationId: "internalSignProjectToken",
  summary: "Sign a project token",
  description: "An ES256 JWT signed with the project's current key (the private key never leaves tenancy).",
  request: { params: ProjectIdParam, ...jsonBody(SignProjectTokenRequest, "Subject, audience, lifetime, claims") },
  responses: jsonOk(SignProjectTokenResponse, "The token and the key id"),
});

export const internalProjectPrincipalRoute = defineInternalRoute(tenancy, {
  method: "post",
  path: "/internal/projects/{projectId}/principal",
  operationId: "internalProjectPrincipal",
  summary: "A principal of a project",
  description:
    "The principal a user or a usable API token acts as, when it can see the project; 404 problem otherwise.",
  request: { params: ProjectIdParam, ...jsonBody(ProjectPrincipalRequest, "The principal's type and id") },
  responses: jsonOk(ResolvedPrincipal, "The principal as the platform sees it"),
});

export const internalAuthorizeRoute = defineInternalRoute(tenancy, {
  method: "post",
  path: "/internal/authz/check",
  operationId: "internalAuthorize",
  summary: "Authorization decision",
  description: "Whether a principal holds a permission in an organization or project.",
  request: jsonBody(AuthorizeRequest, "The principal, the permission and the scope"),
  responses: jsonOk(AuthorizeResponse, "The decision and the roles found"),
});

/**
 * The internal tenancy-svc endpoints, each exported by name above: served with service-kit's
 * `internalRoute`, called with `callInternal`. This list is for checks that walk them all.
 */
export const tenancyInternalRoutes: readonly InternalRoute[] = [
  internalResolveApiTokenRoute,
  internalResolveSessionRoute,
  internalResolveOidcUserRoute,
  internalProjectVerificationKeysRoute,
  internalResolveOrgRoute,
  internalSignProjectTokenRoute,
  internalProjectPrincipalRoute,
  internalAuthorizeRoute,
];
