import { z } from "@hono/zod-openapi";
import { OrgRoleSchema } from "./roles.ts";

export const PRINCIPAL_TYPES = ["user", "api_token", "cluster", "sandbox", "service"] as const;
export type PrincipalType = (typeof PRINCIPAL_TYPES)[number];

/**
 * Who is calling, as the gateway established it and passed on in the internal identity JWT.
 * Restrictions (`orgId`, `projectId`, `role`) narrow what the principal may do; they never widen it.
 */
export const PrincipalSchema = z.object({
  type: z.enum(PRINCIPAL_TYPES),
  id: z.string(),
  displayName: z.string().optional(),
  /** The user an API token acts for (its creator). */
  userId: z.string().optional(),
  /** Organization a token is bound to. */
  orgId: z.string().optional(),
  /** Project a token, cluster or sandbox is bound to. */
  projectId: z.string().optional(),
  /** Role cap of an API token. */
  role: OrgRoleSchema.optional(),
  /** When set, the only permissions an API token may use (on top of its role cap and project). */
  scopes: z.array(z.string()).optional(),
  sandboxId: z.string().optional(),
  /** The browser session (`ses_` id) the request came through, when it carried the session cookie. */
  sessionId: z.string().optional(),
});
export type Principal = z.infer<typeof PrincipalSchema>;

export const INTERNAL_IDENTITY_HEADER = "x-agentplane-identity";
/**
 * The `kid` of identities the cluster's egress proxy signs with its own key: governance takes them
 * for egress decisions only, no other service at all (decision 0062).
 */
export const EGRESS_IDENTITY_SIGNER = "egress";
export const REQUEST_ID_HEADER = "x-request-id";
/** A service's answer names the organization of the resource it acted on (read and removed by the gateway). */
export const RESOURCE_ORG_HEADER = "x-agentplane-resource-org";
/**
 * A service's OAuth refusal names its error code (RFC 6749 §5.2, e.g. a device poll's
 * `authorization_pending`), so the gateway's audit rule need not read the body; the gateway
 * removes it before the answer leaves (the code is in the body too).
 */
export const OAUTH_ERROR_HEADER = "x-agentplane-oauth-error";
