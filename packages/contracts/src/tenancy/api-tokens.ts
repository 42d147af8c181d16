import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { PERMISSIONS, type Permission } from "../common/permissions.ts";
import { OrgRoleSchema } from "../common/roles.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import { jsonBody, jsonRequest, Name, NoContent, OrgIdParams, PageQuery } from "./shared.ts";

/** Permissions a token is restricted to: anything else answers 403, whatever its role allows. */
export const TokenScopes = z
  .array(z.enum(Object.keys(PERMISSIONS) as [Permission, ...Permission[]]))
  .min(1)
  .max(Object.keys(PERMISSIONS).length)
  .openapi({
    description:
      'When set, the only permissions the token may use (e.g. `["llm:invoke"]`: model calls through `/v1/llm/**` and nothing else); every other route answers 403. Absent: everything its role cap allows.',
    example: ["llm:invoke"],
  });

export const ApiToken = z
  .object({
    id: z.string(),
    /** Absent for the installation owner token, which is not bound to one organization. */
    orgId: z.string().optional(),
    userId: z.string(),
    name: z.string(),
    /** Role cap: the token acts as its creator, never above this role. */
    role: OrgRoleSchema,
    /** When set, the token works on this project only. */
    projectId: z.string().optional(),
    scopes: TokenScopes.optional(),
    /** The first characters of the token, to recognize it (`apl_xxxxxxxx`). */
    prefix: z.string(),
    createdAt: Timestamp,
    lastUsedAt: Timestamp.optional(),
    expiresAt: Timestamp.optional(),
    revokedAt: Timestamp.optional(),
  })
  .openapi("ApiToken");
export type ApiToken = z.infer<typeof ApiToken>;

export const CreatedApiToken = ApiToken.extend({
  /** The secret token, shown only in this response. */
  token: z.string(),
}).openapi("CreatedApiToken");

export const ApiTokenList = z
  .object({ items: z.array(ApiToken), nextCursor: z.string().optional() })
  .openapi("ApiTokenList");

export const CreateApiTokenBody = z
  .strictObject({
    name: Name,
    /** Defaults to the creator's role; may not be above it. */
    role: OrgRoleSchema.optional(),
    projectId: z.string().max(64).optional(),
    scopes: TokenScopes.optional(),
    /** Made with an expiring token: defaults to that token's expiry and may not be after it. */
    expiresAt: Timestamp.optional(),
  })
  .openapi("CreateApiToken");

const TokenParams = z.object({ tokenId: pathParam("tokenId", "tok_01jc2x3y4z5a6b7c8d9e0f1g2h") });
const tags = ["API tokens"];

export const createApiTokenRoute = defineRoute(
  { service: "tenancy", access: "api-tokens:manage" },
  {
    operationId: "createApiToken",
    description:
      "Creates an API token (`apl_…`) with a role no higher than the caller's, optionally restricted to a project, to a set of permissions (`scopes`) and given an expiry. The secret is in this response only; it is stored as a hash.",
    method: "post",
    path: "/v1/orgs/{orgId}/api-tokens",
    tags,
    summary: "Create an API token; the secret is returned once",
    request: { params: OrgIdParams, ...jsonRequest(CreateApiTokenBody) },
    responses: {
      201: jsonBody(CreatedApiToken, "Created (the only response with the secret)"),
      ...limitedCreateConflict("api-tokens"),
    },
  },
);

export const listApiTokensRoute = defineRoute(
  { service: "tenancy", access: "api-tokens:manage" },
  {
    operationId: "listApiTokens",
    description: "API tokens of the organization: admins see all, others their own. Never returns secrets.",
    method: "get",
    path: "/v1/orgs/{orgId}/api-tokens",
    tags,
    summary: "API tokens of the organization (admins see all, others their own); no secrets",
    request: { params: OrgIdParams, query: PageQuery },
    responses: { 200: jsonBody(ApiTokenList, "One page of tokens") },
  },
);

/**
 * The caller's personal tokens: those bound to no organization (the installation owner token and
 * the tokens `auth login` mints). `/v1/orgs/{orgId}/api-tokens` lists an organization's tokens, so
 * these live beside the caller's other own things under `/v1/auth/` (`/v1/auth/me`,
 * `/v1/auth/sessions`); the spec's token group does not place them.
 */
export const listMyApiTokensRoute = defineRoute(
  { service: "tenancy", access: "authenticated", tokenScope: "api-tokens:manage" },
  {
    operationId: "listMyApiTokens",
    description:
      "The caller's own personal API tokens: those bound to no organization (the installation owner token, the tokens `agentplane auth login` mints), revoked and expired ones included. A token lists only its user's tokens that rank at most its own role; a token bound to an organization lists none (403). A token restricted by `scopes` lists only when they include `api-tokens:manage`. Never returns secrets.",
    method: "get",
    path: "/v1/auth/api-tokens",
    tags,
    summary: "The caller's personal API tokens (bound to no organization); no secrets",
    request: { query: PageQuery },
    responses: { 200: jsonBody(ApiTokenList, "One page of tokens") },
  },
);

export const getApiTokenRoute = defineRoute(
  { service: "tenancy", access: "api-tokens:manage" },
  {
    operationId: "getApiToken",
    description: "One API token's metadata (name, role, restriction, last use), never its secret.",
    method: "get",
    path: "/v1/api-tokens/{tokenId}",
    tags,
    summary: "One API token, without its secret",
    request: { params: TokenParams },
    responses: { 200: jsonBody(ApiToken, "The token") },
  },
);

export const revokeApiTokenRoute = defineRoute(
  { service: "tenancy", access: "api-tokens:manage" },
  {
    operationId: "revokeApiToken",
    description:
      "Revokes the token; the gateway rejects it within about two seconds. An admin cannot revoke an owner's token; audited.",
    method: "delete",
    path: "/v1/api-tokens/{tokenId}",
    tags,
    summary: "Revoke an API token; it stops working within seconds",
    request: { params: TokenParams },
    responses: { 204: NoContent },
  },
);

export const apiTokenRoutes = [
  createApiTokenRoute,
  listApiTokensRoute,
  listMyApiTokensRoute,
  getApiTokenRoute,
  revokeApiTokenRoute,
] as const;
