import { PERMISSIONS, type Principal } from "@agentplane/contracts";
import { forbidden, ProblemError } from "@agentplane/problem-details";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { callTool, ToolCallDenied } from "../connectors/services/calls.ts";
import { rowStamp } from "../connectors/services/hot-index.ts";
import type { ConnectorRuntime } from "../connectors/services/runtime.ts";
import type { ConnectorRow } from "../connectors/services/store.ts";
import { type ToolViewer, viewerKey, visibleTools } from "../connectors/services/visibility.ts";
import type { ConnectionsContext } from "../context.ts";
import { ORG_TOOLS, type PlatformClients, PROJECT_TOOLS } from "./platform-tools.ts";

export interface McpScope {
  principal: Principal;
  orgId: string;
  /** Set for the project endpoint; the org endpoint spans the projects the caller can read. */
  projectId?: string;
  projectAdmin: boolean;
  /** The caller's teams in the organization (project scope; per project on the org endpoint). */
  teamIds?: readonly string[] | undefined;
  requestId?: string | undefined;
}

/**
 * Between the project, the connector and the tool of an MCP tool name. Connector names never hold
 * it nor end in `_` (the contract refuses both) and project prefixes hold no `__` either, so the
 * first `__` of a name ends its connector (or project) part: two connectors never share a name.
 */
const SEP = "__";
const MAX_TOOL_NAME = 128;

/** The tools an MCP endpoint lists and calls: visible connector tools plus the platform's own. */
export class McpToolCatalog {
  private readonly ctx: ConnectionsContext;
  private readonly runtime: ConnectorRuntime;
  private readonly clients: PlatformClients;

  constructor(ctx: ConnectionsContext, runtime: ConnectorRuntime, clients: PlatformClients) {
    this.ctx = ctx;
    this.runtime = runtime;
    this.clients = clients;
  }

  /** Connector rows in scope, each with the prefix of its tool names. */
  private async connectors(scope: McpScope): Promise<Array<{ row: ConnectorRow; prefix: string; viewer: ToolViewer }>> {
    if (scope.projectId) {
      const rows = await this.runtime.index.projectRows(this.ctx.db, scope.projectId);
      const viewer = { projectAdmin: scope.projectAdmin, teamIds: scope.teamIds };
      return rows.map((row) => ({ row, prefix: `${row.name}${SEP}`, viewer }));
    }
    const rows = await this.runtime.index.orgRows(this.ctx.db, scope.orgId);
    const projects = new Map<string, { slug: string; viewer: ToolViewer } | null>();
    for (const projectId of new Set(rows.map((r) => r.project_id))) {
      const authz = await this.runtime.authorizer.check({
        principal: scope.principal,
        permission: "connections:read",
        projectId,
      });
      projects.set(
        projectId,
        authz.decision === "allowed"
          ? {
              slug: await this.projectSlug(scope, projectId),
              viewer: {
                projectAdmin: authz.projectRole === "admin" || scope.projectAdmin,
                teamIds: authz.teamIds ?? [],
              },
            }
          : null,
      );
    }
    const prefixes = projectPrefixes(projects);
    return rows.flatMap((row) => {
      const project = projects.get(row.project_id);
      const prefix = prefixes.get(row.project_id);
      return project && prefix ? [{ row, prefix: `${prefix}${SEP}${row.name}${SEP}`, viewer: project.viewer }] : [];
    });
  }

  private slugs = new Map<string, string>();
  /** The project's name as letters, digits and `-` (project names are neither unique nor restricted). */
  private async projectSlug(scope: McpScope, projectId: string): Promise<string> {
    const cached = this.slugs.get(projectId);
    if (cached) return cached;
    let name = projectId;
    if (this.clients.tenancy) {
      const project = await this.clients.tenancy
        .request<{ slug?: string; name?: string }>("GET", `/v1/projects/${projectId}`, { principal: scope.principal })
        .catch(() => undefined);
      name = project?.slug ?? project?.name ?? projectId;
    }
    const slug = name.replace(/[^a-zA-Z0-9-]+/g, "-").replace(/^-+|-+$/g, "") || "project";
    this.slugs.set(projectId, slug);
    return slug;
  }

  private platformTools(scope: McpScope) {
    return (scope.projectId ? PROJECT_TOOLS : ORG_TOOLS).filter((t) => !t.adminOnly || scope.projectAdmin);
  }

  async list(scope: McpScope): Promise<Tool[]> {
    const tools: Tool[] = this.platformTools(scope).map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as Tool["inputSchema"],
    }));
    const connectors = await this.connectors(scope);
    const settings = await this.runtime.index.entrySettings(
      this.ctx.db,
      connectors.map((c) => c.row),
    );
    for (const { row, prefix, viewer } of connectors) {
      const loaded = await this.runtime.tools(this.ctx.db, row);
      // Built once per tool set, settings version, prefix and viewer class.
      const listed = this.runtime.view(loaded, `mcp:${rowStamp(row)}:${prefix}:${viewerKey(viewer)}`, () =>
        visibleTools(row, loaded.tools, settings, viewer).map(
          (t): Tool => ({
            name: `${prefix}${t.name}`,
            description: t.description,
            inputSchema: t.inputSchema as Tool["inputSchema"],
          }),
        ),
      );
      tools.push(...listed);
    }
    return tools;
  }

  /**
   * The permission REST's `tools/call` needs (listing them needs only `connections:read`). A refusal
   * is recorded here: it reaches the caller as a tool result inside a 200, which the gateway's
   * record of refused requests (REST's 403) never sees.
   */
  private async mayCall(scope: McpScope, row: ConnectorRow, tool: string): Promise<void> {
    const authz = await this.runtime.authorizer.check({
      principal: scope.principal,
      permission: "connectors:call",
      projectId: row.project_id,
    });
    if (authz.decision !== "allowed") {
      await this.runtime.audit.record(scope.principal, {
        action: "connector.tool_called",
        orgId: row.org_id,
        projectId: row.project_id,
        targetType: "connector",
        targetId: row.id,
        outcome: "denied",
        // The name is the caller's (the tool may not exist): kept to a tool name's length.
        details: { tool: tool.slice(0, MAX_TOOL_NAME), permission: "connectors:call", via: "mcp" },
        requestId: scope.requestId,
      });
      const { minRole } = PERMISSIONS["connectors:call"];
      throw forbidden(`Calling connector tools needs the permission connectors:call (role ${minRole} or above)`);
    }
  }

  /** The call's result, or undefined when no tool of that name is in scope. */
  async call(scope: McpScope, name: string, args: Record<string, unknown>): Promise<CallToolResult | undefined> {
    const platform = this.platformTools(scope).find((t) => t.name === name);
    if (platform) {
      try {
        const value = await platform.run(this.clients, scope, args);
        return { content: [{ type: "text", text: JSON.stringify(value ?? null) }] };
      } catch (error) {
        // The service refused the caller: the call was an internal one, which no gateway records.
        if (error instanceof ProblemError && (error.status === 401 || error.status === 403)) {
          await this.runtime.audit.record(scope.principal, {
            action: "mcp.tool_called",
            orgId: scope.orgId,
            ...(scope.projectId ? { projectId: scope.projectId } : {}),
            targetType: scope.projectId ? "project" : "organization",
            targetId: scope.projectId ?? scope.orgId,
            outcome: "denied",
            details: { tool: name, status: error.status, via: "mcp" },
            requestId: scope.requestId,
          });
        }
        return errorResult(error);
      }
    }
    for (const { row, prefix, viewer } of await this.connectors(scope)) {
      if (!name.startsWith(prefix)) continue;
      try {
        await this.mayCall(scope, row, name.slice(prefix.length));
        const result = await callTool(
          this.ctx,
          this.runtime,
          row,
          { principal: scope.principal, ...viewer, requestId: scope.requestId },
          name.slice(prefix.length),
          args,
          "/arguments",
        );
        return result as CallToolResult;
      } catch (error) {
        if (error instanceof ProblemError && error.status === 404) return undefined;
        return errorResult(error);
      }
    }
    return undefined;
  }
}

/** Tool-level failures are results with `isError` (the model sees them), not protocol errors. */
function errorResult(error: unknown): CallToolResult {
  if (error instanceof ToolCallDenied) {
    return { content: [{ type: "text", text: `${error.message}` }], isError: true };
  }
  if (error instanceof ProblemError) {
    const details = (error.errors ?? []).map((e) => `${e.pointer}: ${e.message}`).join("; ");
    const reason = typeof error.extensions.reason === "string" ? ` (${error.extensions.reason})` : "";
    return {
      content: [
        {
          type: "text",
          text: `${error.status} ${error.detail ?? error.title}${reason}${details ? `: ${details}` : ""}`,
        },
      ],
      isError: true,
    };
  }
  return { content: [{ type: "text", text: (error as Error).message ?? "The call failed" }], isError: true };
}

/**
 * Each readable project's part of the organization endpoint's tool names: its slug, or, where
 * several projects in scope share a slug (names are not unique), `<slug>_<id>`. Slugs hold no `_`
 * and ids are unique, so no two projects share a prefix whatever they are named.
 */
function projectPrefixes(projects: ReadonlyMap<string, { slug: string } | null>): Map<string, string> {
  const counts = new Map<string, number>();
  for (const project of projects.values()) {
    if (project) counts.set(project.slug, (counts.get(project.slug) ?? 0) + 1);
  }
  const prefixes = new Map<string, string>();
  for (const [projectId, project] of projects) {
    if (!project) continue;
    const shared = (counts.get(project.slug) ?? 0) > 1;
    prefixes.set(projectId, shared ? `${project.slug}_${projectId.replace(/[^a-zA-Z0-9]+/g, "")}` : project.slug);
  }
  return prefixes;
}
