import type { Principal } from "@agentplane/contracts";
import { ProblemError, problemJson } from "@agentplane/problem-details";
import { type Authorizer, authorize, type ServiceApp, type ServiceEnv } from "@agentplane/service-kit";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Context } from "hono";
import type { ConnectorRuntime } from "../connectors/services/runtime.ts";
import type { ConnectionsContext } from "../context.ts";
import { isProjectAdmin } from "../routes/connectors/helpers.ts";
import { type McpScope, McpToolCatalog } from "./catalog.ts";
import type { PlatformClients } from "./platform-tools.ts";

/** The path of the OAuth protected-resource metadata the 401 points MCP clients to (RFC 9728). */
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";
const CHANGE_POLL_MS = 5_000;
/**
 * Event streams (GET) one caller (a user, with all its tokens; or another principal) may hold open
 * on one replica at once: each holds a server and polls the database until the client leaves.
 */
export const MAX_STREAMS_PER_CALLER = 8;
/**
 * Tool calls and listings one POST may carry (a JSON-RPC batch): the gateway counts the POST once.
 * Protocol revisions since 2025-06-18 send no batches at all; the SDK alone would take a hundred.
 */
export const MAX_COSTLY_MESSAGES_PER_POST = 10;
/** A stream is closed after this long (by default); MCP clients open a new one. */
export const MAX_STREAM_MS = 30 * 60_000;

/**
 * The MCP SDK's server side, loaded on the first MCP request rather than at start. The SDK server
 * builds an Ajv instance (with formats) per server unless given one: ~0.25 ms of CPU per request
 * in stateless mode, so one validator serves every request's server.
 */
let serverModules:
  | Promise<{
      Server: typeof import("@modelcontextprotocol/sdk/server/index.js").Server;
      WebStandardStreamableHTTPServerTransport: typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js").WebStandardStreamableHTTPServerTransport;
      types: typeof import("@modelcontextprotocol/sdk/types.js");
      jsonSchemaValidator: import("@modelcontextprotocol/sdk/validation/ajv").AjvJsonSchemaValidator;
    }>
  | undefined;
function mcpServerModules() {
  serverModules ??= Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("@modelcontextprotocol/sdk/validation/ajv"),
  ]).then(([server, transport, types, ajv]) => ({
    Server: server.Server,
    WebStandardStreamableHTTPServerTransport: transport.WebStandardStreamableHTTPServerTransport,
    types,
    jsonSchemaValidator: new ajv.AjvJsonSchemaValidator(),
  }));
  return serverModules;
}

/**
 * The platform's MCP endpoints (`/mcp` for an organization, `/projects/{projectId}/mcp` for a
 * project), official SDK server over Streamable HTTP in **stateless** mode: every POST is served by
 * a fresh server and transport, so any replica behind the gateway answers any request and no
 * session store is needed. `GET` opens the standalone SSE stream that carries
 * `notifications/tools/list_changed`; changes made on this replica are announced at once, changes
 * made on others within a few seconds (the stream polls the connectors' change stamp).
 */
export function registerMcpEndpoints(
  app: ServiceApp,
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  clients: PlatformClients,
): void {
  const lifetimeMs = ctx.config.mcpStreamLifetimeMs;
  const catalog = new McpToolCatalog(ctx, runtime, clients);
  const streams = new Map<string, number>();
  const release = (holder: string) => {
    const left = (streams.get(holder) ?? 1) - 1;
    if (left > 0) streams.set(holder, left);
    else streams.delete(holder);
  };
  const handle = async (c: Context<ServiceEnv>, projectId: string | undefined) => {
    const { Server, WebStandardStreamableHTTPServerTransport, types, jsonSchemaValidator } = await mcpServerModules();
    const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } = types;
    const principal = c.get("principal");
    if (!principal) {
      return problemJson(
        c,
        new ProblemError("unauthenticated", {
          detail: "Authentication is required",
          headers: { "www-authenticate": `Bearer resource_metadata="${RESOURCE_METADATA_PATH}"` },
        }),
      );
    }
    const scope = await resolveScope(c, runtime.authorizer, clients, principal, projectId);
    const holder = c.req.method === "GET" ? `${principal.type}:${principal.userId ?? principal.id}` : undefined;
    if (holder) {
      const held = streams.get(holder) ?? 0;
      if (held >= MAX_STREAMS_PER_CALLER) {
        return problemJson(
          c,
          new ProblemError("rate-limited", {
            detail: `At most ${MAX_STREAMS_PER_CALLER} MCP event streams may be open at once for one caller; close one first`,
            headers: { "retry-after": String(CHANGE_POLL_MS / 1000) },
          }),
        );
      }
      // Taken before the answer is built, so concurrent GETs cannot all pass the check.
      streams.set(holder, held + 1);
    }
    const server = new Server(
      { name: projectId ? "agentplane-project" : "agentplane-org", version: "1.0.0" },
      { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator },
    );
    // A fresh server serves each POST: this counts the costly messages of one batch.
    let costly = 0;
    const admit = () => {
      if (++costly > MAX_COSTLY_MESSAGES_PER_POST) {
        throw new McpError(
          ErrorCode.InvalidRequest,
          `One request may carry at most ${MAX_COSTLY_MESSAGES_PER_POST} tool calls and listings; send the rest separately`,
        );
      }
    };
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      admit();
      return { tools: await catalog.list(scope) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      admit();
      const result = await catalog.call(
        scope,
        request.params.name,
        (request.params.arguments ?? {}) as Record<string, unknown>,
      );
      if (!result) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      return result;
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    let response: Response;
    try {
      await server.connect(transport);
      response = await transport.handleRequest(c.req.raw);
    } catch (error) {
      if (holder) release(holder);
      throw error;
    }
    if (holder && response.status === 200) {
      watchChanges(ctx, runtime, scope, server, c.req.raw.signal, lifetimeMs, () => release(holder));
    } else {
      if (holder) release(holder);
      // Closed once the SDK has finished with the request (it forgets the request's abort
      // controller just after the answer): closing at once would abort, and so build an
      // AbortError for, every answered request.
      setImmediate(() => void server.close().catch(() => {}));
    }
    return response;
  };
  app.all("/projects/:projectId/mcp", (c) => handle(c, c.req.param("projectId")));
  app.all("/mcp", (c) => handle(c, undefined));
}

async function resolveScope(
  c: Context<ServiceEnv>,
  authorizer: Authorizer,
  clients: PlatformClients,
  principal: Principal,
  projectId: string | undefined,
): Promise<McpScope> {
  const requestId = c.get("requestId");
  if (projectId) {
    const authz = await authorize(c, authorizer, "connections:read", { projectId });
    return {
      principal,
      orgId: authz.orgId ?? "",
      projectId,
      projectAdmin: isProjectAdmin(authz),
      teamIds: authz.teamIds ?? [],
      requestId,
    };
  }
  let orgId = c.req.query("orgId") ?? principal.orgId;
  if (!orgId && clients.tenancy) {
    const me = await clients.tenancy.request<{ organizations?: Array<{ id: string }> }>("GET", "/v1/auth/me", {
      principal,
    });
    orgId = me.organizations?.[0]?.id;
  }
  if (!orgId) throw new ProblemError("bad-request", { detail: "Name the organization with ?orgId=" });
  const authz = await authorize(c, authorizer, "org:read", { orgId });
  return {
    principal,
    orgId,
    projectAdmin: authz.orgRole === "owner" || authz.orgRole === "admin",
    requestId,
  };
}

/**
 * Announces tool list changes on an open GET stream until the client goes away or the stream has
 * been open for `lifetimeMs`; `closed` is called once, when it ends.
 */
function watchChanges(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  scope: McpScope,
  server: Server,
  signal: AbortSignal,
  lifetimeMs: number,
  closed: () => void,
): void {
  let stamp: string | undefined;
  const announce = () => void server.sendToolListChanged().catch(() => {});
  const local = (projectId: string) => {
    if (!scope.projectId || scope.projectId === projectId) announce();
  };
  const poll = async () => {
    let query = ctx.db
      .selectFrom("connectors")
      .select((eb) => [eb.fn.countAll<string>().as("n"), eb.fn.max("updated_at").as("at")]);
    query = scope.projectId ? query.where("project_id", "=", scope.projectId) : query.where("org_id", "=", scope.orgId);
    const row = await query.executeTakeFirst();
    const next = `${row?.n ?? 0}:${row?.at ? new Date(row.at as Date).getTime() : 0}`;
    if (stamp !== undefined && next !== stamp) announce();
    stamp = next;
  };
  void poll().catch(() => {});
  const timer = setInterval(() => void poll().catch(() => {}), CHANGE_POLL_MS);
  timer.unref();
  runtime.changes.on("changed", local);
  let lifetime: NodeJS.Timeout | undefined;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    clearTimeout(lifetime);
    signal.removeEventListener("abort", stop);
    runtime.changes.off("changed", local);
    void server.close().catch(() => {});
    closed();
  };
  if (signal.aborted) {
    stop();
    return;
  }
  signal.addEventListener("abort", stop, { once: true });
  // Closing the server ends the stream's body: the client sees the end and opens a new one.
  lifetime = setTimeout(stop, lifetimeMs);
  lifetime.unref();
}
