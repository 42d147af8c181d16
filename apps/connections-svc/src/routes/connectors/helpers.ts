import type { AuthorizeResponse, Permission } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, requirePrincipal, type ServiceEnv } from "@agentplane/service-kit";
import type { Context } from "hono";
import type { Actor } from "../../connectors/services/connectors.ts";
import { type ConnectorRow, getConnectorRow } from "../../connectors/services/store.ts";
import type { ToolViewer } from "../../connectors/services/visibility.ts";
import type { ConnectionsRouteContext } from "../context.ts";

export function isProjectAdmin(authz: AuthorizeResponse): boolean {
  return authz.projectRole === "admin" || authz.orgRole === "owner" || authz.orgRole === "admin";
}

/** The caller as a viewer of tools: admin, and its teams from tenancy's authorization answer. */
export function toolViewer(authz: AuthorizeResponse): ToolViewer {
  return { projectAdmin: isProjectAdmin(authz), teamIds: authz.teamIds ?? [] };
}

/** Authorizes against a project named in the path. */
export async function projectActor(
  c: Context<ServiceEnv>,
  ctx: ConnectionsRouteContext,
  permission: Permission,
  projectId: string,
  authorizer = ctx.authorizer,
): Promise<{ actor: Actor; authz: AuthorizeResponse }> {
  const authz = await authorize(c, authorizer, permission, { projectId });
  const principal = requirePrincipal(c);
  return { authz, actor: { principal, orgId: authz.orgId ?? "", requestId: c.get("requestId") } };
}

/**
 * Loads the connector of a `/v1/mcp-servers/{id}` path and authorizes against its project: a
 * connector in a project the caller cannot see answers 404 like one that does not exist. `hot`
 * routes (tool calls and lists) take the row from the runtime's short-lived index, and tenancy's
 * answer from the runtime's authorizer (reused for 3 s, as a `RemoteAuthorizer` does).
 */
export async function connectorActor(
  c: Context<ServiceEnv>,
  ctx: ConnectionsRouteContext,
  permission: Permission,
  connectorId: string,
  options: { hot?: boolean } = {},
): Promise<{ row: ConnectorRow; actor: Actor; authz: AuthorizeResponse }> {
  requirePrincipal(c);
  const row = options.hot
    ? await ctx.connectors.index.row(ctx.db, connectorId)
    : await getConnectorRow(ctx.db, connectorId);
  const authorizer = options.hot ? ctx.connectors.authorizer : ctx.authorizer;
  const { actor, authz } = await projectActor(c, ctx, permission, row.project_id, authorizer).catch(
    (error: unknown) => {
      if ((error as { status?: number }).status === 404) throw notFound("Connector", connectorId);
      throw error;
    },
  );
  return { row, actor: { ...actor, orgId: row.org_id }, authz };
}
