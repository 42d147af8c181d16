import { limitedCreateConflict } from "../common/object-limits.ts";
import { defineRoute } from "../common/route.ts";
import { jsonBody, jsonRequest, NoContent, PageQuery, ProjectIdParams } from "../tenancy/shared.ts";
import {
  AttachCredentialBody,
  CallToolBody,
  CallToolResultSchema,
  ConnectorIdParams,
  ConnectorList,
  ConnectorSchema,
  ConnectorStatusSchema,
  ConnectorToolList,
  CreateHttpConnectorBody,
  CreateMcpConnectorBody,
  DiscoverResult,
  DiscoveryPreview,
  EntryParams,
  EntryVisibility,
  PendingSpecList,
  PendingSpecParams,
  PreviewDiscoveryBody,
  ProjectServerParams,
  PromoteResult,
  ServerIdParams,
  SetVisibilityBody,
  SpecDiff,
  UpdateConnectorBody,
} from "./connectors.ts";

const TAGS = ["Connectors"];
const read = { service: "connections", access: "connections:read" } as const;
const manage = { service: "connections", access: "connections:manage" } as const;

export const listConnectorsRoute = defineRoute(read, {
  operationId: "listConnectors",
  method: "get",
  path: "/v1/projects/{projectId}/mcp-servers",
  tags: TAGS,
  summary: "The project's connectors, oldest first, by cursor",
  description: "The project's connectors (remote MCP servers and HTTP connectors), oldest first, cursor-paged.",
  request: { params: ProjectIdParams, query: PageQuery },
  responses: { 200: jsonBody(ConnectorList, "A page of connectors") },
});

export const createMcpConnectorRoute = defineRoute(manage, {
  operationId: "createMcpConnector",
  method: "post",
  path: "/v1/projects/{projectId}/mcp-servers",
  tags: TAGS,
  summary: "Connect a remote MCP server (Streamable HTTP, HTTP+SSE fallback); its tools are listed now",
  description:
    "Connects a remote MCP server by URL (Streamable HTTP, with HTTP+SSE as a fallback), optional headers and a credential; its tools are listed at once. The URL is fetched SSRF-safely (private addresses refused unless allowed). A server that does not answer in time is a 504, one that cannot be reached or gives no usable answer a 502, a URL the address policy refuses a 422 (each with `reason`); nothing is created.",
  request: { params: ProjectIdParams, ...jsonRequest(CreateMcpConnectorBody) },
  responses: {
    201: jsonBody(ConnectorSchema, "The connector"),
    ...limitedCreateConflict("connectors", "A connector of this name exists in the project"),
  },
});

export const createHttpConnectorRoute = defineRoute(manage, {
  operationId: "createHttpConnector",
  method: "post",
  path: "/v1/projects/{projectId}/mcp-servers/http",
  tags: TAGS,
  summary: "An HTTP connector from an OpenAPI description (URL or inline; 3.0, 3.1, Swagger 2.0)",
  description:
    "Builds a connector from an OpenAPI description (a URL or the document inline; JSON or YAML; 3.0, 3.1, Swagger 2.0): every operation, filtered by tag, path and method, becomes a tool with its input and output schemas. A server that does not answer in time is a 504, one that cannot be reached or gives no usable answer a 502, a URL the address policy refuses a 422 (each with `reason`); nothing is created.",
  request: { params: ProjectIdParams, ...jsonRequest(CreateHttpConnectorBody) },
  responses: {
    201: jsonBody(ConnectorSchema, "The connector"),
    ...limitedCreateConflict("connectors", "A connector of this name exists in the project"),
  },
});

export const previewConnectorDiscoveryRoute = defineRoute(manage, {
  operationId: "previewConnectorDiscovery",
  method: "post",
  path: "/v1/projects/{projectId}/mcp-servers/discover/preview",
  tags: TAGS,
  summary: "The tools a description or MCP server would give, with skipped operations; saves nothing",
  description:
    "Lists the tools a description or a remote MCP server would give, with the operations skipped and why, without saving anything. A source that fails is answered as at creation (504 on a timeout, 502 when it cannot be reached or gives no usable answer).",
  request: { params: ProjectIdParams, ...jsonRequest(PreviewDiscoveryBody) },
  responses: { 200: jsonBody(DiscoveryPreview, "The tools that would exist") },
});

export const attachConnectorCredentialRoute = defineRoute(manage, {
  operationId: "attachConnectorCredential",
  method: "put",
  path: "/v1/projects/{projectId}/mcp-servers/{serverId}/credentials",
  tags: TAGS,
  summary: "Attach or replace the governance credential injected into the connector's calls",
  description: "Attaches (or replaces) the governance credential whose secret is injected into the connector's calls.",
  request: { params: ProjectServerParams, ...jsonRequest(AttachCredentialBody) },
  responses: { 200: jsonBody(ConnectorSchema, "The connector") },
});

export const removeConnectorCredentialRoute = defineRoute(manage, {
  operationId: "removeConnectorCredential",
  method: "delete",
  path: "/v1/projects/{projectId}/mcp-servers/{serverId}/credentials",
  tags: TAGS,
  summary: "Stop injecting a credential (the credential itself stays in governance)",
  description: "Stops injecting a credential into the connector's calls; the credential stays in governance.",
  request: { params: ProjectServerParams },
  responses: { 204: NoContent },
});

export const getConnectorRoute = defineRoute(read, {
  operationId: "getConnector",
  method: "get",
  path: "/v1/mcp-servers/{serverId}",
  tags: TAGS,
  summary: "A connector",
  description: "One connector with its source, base URL, header names (never values) and schedule.",
  request: { params: ServerIdParams },
  responses: { 200: jsonBody(ConnectorSchema, "The connector") },
});

export const updateConnectorRoute = defineRoute(manage, {
  operationId: "updateConnector",
  method: "patch",
  path: "/v1/mcp-servers/{serverId}",
  tags: TAGS,
  summary: "Rename a connector, change its base URL, headers or re-discovery schedule",
  description: "Changes a connector's name, base URL, headers or re-discovery schedule.",
  request: { params: ServerIdParams, ...jsonRequest(UpdateConnectorBody) },
  responses: { 200: jsonBody(ConnectorSchema, "The connector") },
});

export const deleteConnectorRoute = defineRoute(manage, {
  operationId: "deleteConnector",
  method: "delete",
  path: "/v1/mcp-servers/{serverId}",
  tags: TAGS,
  summary: "Delete a connector, its pending specs and visibility settings",
  description: "Deletes the connector with its pending specs and visibility settings; audited.",
  request: { params: ServerIdParams },
  responses: { 204: NoContent },
});

export const getConnectorStatusRoute = defineRoute(read, {
  operationId: "getConnectorStatus",
  method: "get",
  path: "/v1/mcp-servers/{serverId}/status",
  tags: TAGS,
  summary: "ready or error (with the last error), tool count, last discovery, pending specs",
  description: "`ready`, or `error` with the last error; tool count, last discovery and pending specs.",
  request: { params: ServerIdParams },
  responses: { 200: jsonBody(ConnectorStatusSchema, "The status") },
});

export const listConnectorToolsRoute = defineRoute(read, {
  operationId: "listConnectorTools",
  method: "get",
  path: "/v1/mcp-servers/{serverId}/tools",
  tags: TAGS,
  summary: "The connector's tools with their visibility (hidden ones included, for managers)",
  description:
    "The connector's tools with their schemas and visibility (hidden ones included, for those who manage the connector).",
  request: { params: ServerIdParams },
  responses: { 200: jsonBody(ConnectorToolList, "The tools") },
});

export const discoverConnectorRoute = defineRoute(manage, {
  operationId: "discoverConnector",
  method: "post",
  path: "/v1/mcp-servers/{connectorId}/discover/url",
  tags: TAGS,
  summary: "Fetch the connector's source again; a change becomes a pending spec, never applied directly",
  description:
    "Fetches the connector's source again. A change is stored as a pending spec, never applied directly; an unchanged source stores nothing. A source that fails marks the connector `error` and is answered as at a tool call: 504 on a timeout, 502 when it cannot be reached or gives no usable answer.",
  request: { params: ConnectorIdParams },
  responses: { 200: jsonBody(DiscoverResult, "Whether anything changed, and the pending spec") },
});

export const listPendingSpecsRoute = defineRoute(read, {
  operationId: "listPendingSpecs",
  method: "get",
  path: "/v1/mcp-servers/{connectorId}/specs/pending",
  tags: TAGS,
  summary: "Discovered specs waiting for promotion, newest first",
  description: "Discovered specs waiting to be promoted, newest first.",
  request: { params: ConnectorIdParams },
  responses: { 200: jsonBody(PendingSpecList, "Pending specs") },
});

export const getPendingSpecDiffRoute = defineRoute(read, {
  operationId: "getPendingSpecDiff",
  method: "get",
  path: "/v1/mcp-servers/{connectorId}/specs/pending/{specId}/diff",
  tags: TAGS,
  summary: "Tools added, removed and changed (schema changes as JSON pointers) against the current version",
  description:
    "Tools added, removed and changed against the current version, with schema differences as JSON pointers and description changes.",
  request: { params: PendingSpecParams },
  responses: { 200: jsonBody(SpecDiff, "The difference") },
});

export const promotePendingSpecRoute = defineRoute(manage, {
  operationId: "promotePendingSpec",
  method: "post",
  path: "/v1/mcp-servers/{connectorId}/specs/pending/{specId}/promote",
  tags: TAGS,
  summary: "Apply a pending spec as the connector's next version (409 when another was promoted since)",
  description:
    "Applies the pending spec as the connector's next version (audited, with who promoted); 409 when another spec was promoted since it was discovered. Visibility settings of tools that remain are kept.",
  request: { params: PendingSpecParams },
  responses: { 200: jsonBody(PromoteResult, "The connector and the promoted spec") },
});

export const setConnectorEntryVisibilityRoute = defineRoute(manage, {
  operationId: "setConnectorEntryVisibility",
  method: "put",
  path: "/v1/mcp-servers/{connectorId}/entries/{entryName}/visibility",
  tags: TAGS,
  summary: "Show or hide one tool, optionally only for some teams; kept across promotions",
  description:
    "Shows or hides one tool, optionally only for some teams. A hidden tool is absent from tool lists and cannot be called.",
  request: { params: EntryParams, ...jsonRequest(SetVisibilityBody) },
  responses: { 200: jsonBody(EntryVisibility, "The visibility") },
});

export const callConnectorToolRoute = defineRoute(
  { service: "connections", access: "connectors:call" },
  {
    operationId: "callConnectorTool",
    method: "post",
    path: "/v1/mcp-servers/{serverId}/tools/call",
    tags: TAGS,
    summary: "Call a tool: arguments validated, then the tool:call policy decision, then the call",
    description:
      "Calls a tool: the arguments are validated against its input schema (400 with JSON pointers), then the `tool:call` policy decision (403 `policy-denied` with the rule id), then the call; the result is MCP-style content with `isError` when the upstream answers with an error. An upstream that does not answer in time is a 504, one that cannot be reached or gives no usable answer a 502, a URL the address policy refuses a 422 (each with `reason`). Audited without argument values or results.",
    request: { params: ServerIdParams, ...jsonRequest(CallToolBody) },
    responses: { 200: jsonBody(CallToolResultSchema, "The MCP-style result (isError for upstream failures)") },
  },
);

export const connectorRoutes = [
  listConnectorsRoute,
  createMcpConnectorRoute,
  createHttpConnectorRoute,
  previewConnectorDiscoveryRoute,
  attachConnectorCredentialRoute,
  removeConnectorCredentialRoute,
  getConnectorRoute,
  updateConnectorRoute,
  deleteConnectorRoute,
  getConnectorStatusRoute,
  listConnectorToolsRoute,
  discoverConnectorRoute,
  listPendingSpecsRoute,
  getPendingSpecDiffRoute,
  promotePendingSpecRoute,
  setConnectorEntryVisibilityRoute,
  callConnectorToolRoute,
] as const;
