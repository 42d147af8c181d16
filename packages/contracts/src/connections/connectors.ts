import { z } from "@hono/zod-openapi";
import { headerNameProblem, headerValueProblem } from "../common/http-headers.ts";
import { CursorPage, JsonObject, pathParam, Timestamp } from "../common/schemas.ts";
import { URL_CREDENTIAL_MARKER } from "../common/url-credentials.ts";

/** Connectors expose tools: a remote MCP server (`mcp`) or an HTTP API built from an OpenAPI description (`http`). */
export const CONNECTOR_KINDS = ["mcp", "http"] as const;
export const CONNECTOR_STATUSES = ["ready", "error"] as const;
export const ENTRY_VISIBILITIES = ["visible", "hidden"] as const;
export const PENDING_SPEC_STATUSES = ["pending", "promoted", "superseded"] as const;

const ConnectorName = z
  .string()
  .trim()
  .min(1)
  .max(48)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_-]*$/, "letters, digits, _ and - (it prefixes tool names as <connector>__<tool>)")
  .refine((name) => !name.includes("__"), "no double underscore: it separates the connector from the tool in MCP names")
  // `a_` + `__` + `_b` would read as `a` + `__` + `__b`: the first `__` must end the connector.
  .refine((name) => !name.endsWith("_"), "must not end with _: the tool name's `__` would be ambiguous");
const HttpUrl = z.url({ protocol: /^https?$/ }).max(2048);

/** Said of every connector URL field (its first line is what the CLI's help shows). */
const URL_CREDENTIALS_NOTE = `Credentials in its query are used but never shown (they read \`${URL_CREDENTIAL_MARKER}\`); prefer \`credentialId\` or \`headers\`.

Never returned, audited or logged: the values of query and fragment parameters named like credentials (\`api_key\`, \`token\`, \`access_token\`, \`key\`, \`sig\`, \`signature\`, \`X-Amz-Signature\`, \`code\`, \`client_secret\`, \`password\`, \`auth\`, … in any case, with \`-\`, \`_\` or \`.\`). User info (\`user:pass@\`) is refused.`;
/** A connector URL as given in a request body: used whole, shown redacted. */
const ConnectorUrl = (what: string, more?: string) =>
  HttpUrl.describe(`${what}. ${URL_CREDENTIALS_NOTE}${more ? `\n\n${more}` : ""}`);
/** A connector URL as answered. */
const ShownUrl = (what: string) =>
  z.string().describe(`${what}, credentials in it replaced by \`${URL_CREDENTIAL_MARKER}\` (they are never returned).`);
const HeaderMap = z
  .record(
    z.string().superRefine((name, ctx) => {
      const problem = headerNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
    z
      .string()
      .max(8192)
      .superRefine((value, ctx) => {
        const problem = headerValueProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
  )
  .refine((h) => Object.keys(h).length <= 32, "at most 32 headers");

/** Selection of operations by tag, path (glob: `*` one segment, `**` any) and method. */
export const OperationFilterSchema = z
  .strictObject({
    tags: z.array(z.string().min(1).max(200)).max(100).optional(),
    paths: z.array(z.string().min(1).max(500)).max(100).optional(),
    methods: z
      .array(
        z.enum([
          "get",
          "put",
          "post",
          "delete",
          "options",
          "head",
          "patch",
          "trace",
          "GET",
          "PUT",
          "POST",
          "DELETE",
          "OPTIONS",
          "HEAD",
          "PATCH",
          "TRACE",
        ]),
      )
      .max(8)
      .optional(),
  })
  .describe("Operations by tags, paths (globs: `*` one segment, `**` any) and methods")
  .openapi("OperationFilter");

export const ConnectorSchema = z
  .object({
    id: z.string(),
    orgId: z.string(),
    projectId: z.string(),
    name: z.string(),
    kind: z.enum(CONNECTOR_KINDS),
    url: ShownUrl("The remote MCP server (kind `mcp`)").optional(),
    specUrl: ShownUrl(
      "Where the OpenAPI description is fetched from (kind `http`; absent for an inline document)",
    ).optional(),
    baseUrl: ShownUrl("Where tool calls go (kind `http`)").optional(),
    /** Names of the extra headers sent to the server; their values are never returned. */
    headerNames: z.array(z.string()),
    /** The governance credential injected into calls (its secret is never returned). */
    credentialId: z.string().optional(),
    include: OperationFilterSchema.optional(),
    exclude: OperationFilterSchema.optional(),
    /** Re-discovery period (into pending specs only); absent: on demand only. */
    discoveryIntervalMinutes: z.number().int().optional(),
    status: z.enum(CONNECTOR_STATUSES),
    lastError: z.string().optional(),
    toolCount: z.number().int(),
    lastDiscoveredAt: Timestamp.optional(),
    /** Incremented by each promotion of a pending spec. */
    version: z.number().int(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Connector");
export type Connector = z.infer<typeof ConnectorSchema>;
export const ConnectorList = CursorPage(ConnectorSchema).openapi("ConnectorList");

export const ConnectorStatusSchema = z
  .object({
    status: z.enum(CONNECTOR_STATUSES),
    lastError: z.string().optional(),
    toolCount: z.number().int(),
    lastDiscoveredAt: Timestamp.optional(),
    version: z.number().int(),
    pendingSpecs: z.number().int(),
  })
  .openapi("ConnectorStatus");

const Discovery = z.number().int().min(5).max(10_080);

export const CreateMcpConnectorBody = z
  .strictObject({
    name: ConnectorName,
    url: ConnectorUrl("The remote MCP server (Streamable HTTP, or the older HTTP+SSE)"),
    headers: HeaderMap.optional(),
    credentialId: z.string().min(1).max(64).optional(),
    discoveryIntervalMinutes: Discovery.optional(),
  })
  .openapi("CreateMcpConnector");

/** `spec`: the OpenAPI document as an object, or its JSON or YAML text. */
const InlineSpec = z.union([
  z
    .string()
    .min(1)
    .max(10 * 1024 * 1024),
  JsonObject(),
]);

export const CreateHttpConnectorBody = z
  .strictObject({
    name: ConnectorName,
    specUrl: ConnectorUrl("Where the OpenAPI description is fetched from").optional(),
    spec: InlineSpec.optional(),
    baseUrl: ConnectorUrl("Where tool calls go (default: the description's `servers[0]`)").optional(),
    credentialId: z.string().min(1).max(64).optional(),
    include: OperationFilterSchema.optional(),
    exclude: OperationFilterSchema.optional(),
    discoveryIntervalMinutes: Discovery.optional(),
  })
  .refine((b) => (b.specUrl === undefined) !== (b.spec === undefined), {
    message: "exactly one of specUrl or spec",
    path: ["specUrl"],
  })
  .openapi("CreateHttpConnector");

export const UpdateConnectorBody = z
  .strictObject({
    name: ConnectorName.optional(),
    baseUrl: ConnectorUrl(
      "Where tool calls go",
      `Sent back as answered, credentials \`${URL_CREDENTIAL_MARKER}\`, it keeps the stored URL; another URL with \`${URL_CREDENTIAL_MARKER}\` in place of a credential is a 400.`,
    ).optional(),
    headers: HeaderMap.optional(),
    discoveryIntervalMinutes: Discovery.nullable().optional(),
  })
  .openapi("UpdateConnector");

export const PreviewDiscoveryBody = z
  .strictObject({
    specUrl: HttpUrl.optional(),
    spec: InlineSpec.optional(),
    /** A remote MCP server to list the tools of. */
    url: HttpUrl.optional(),
    include: OperationFilterSchema.optional(),
    exclude: OperationFilterSchema.optional(),
  })
  .refine((b) => [b.specUrl, b.spec, b.url].filter((v) => v !== undefined).length === 1, {
    message: "exactly one of specUrl, spec or url",
    path: ["specUrl"],
  })
  .openapi("PreviewDiscovery");

const JsonSchemaObject = z.record(z.string(), z.unknown());

export const ToolDefinitionSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    inputSchema: JsonSchemaObject,
    outputSchema: JsonSchemaObject.optional(),
  })
  .openapi("ToolDefinition");

export const SkippedOperationSchema = z
  .object({ method: z.string(), path: z.string(), operationId: z.string().optional(), reason: z.string() })
  .openapi("SkippedOperation");

export const DiscoveryPreview = z
  .object({
    kind: z.enum(CONNECTOR_KINDS),
    title: z.string().optional(),
    baseUrl: ShownUrl("Where tool calls would go").optional(),
    tools: z.array(ToolDefinitionSchema),
    warnings: z.array(SkippedOperationSchema),
  })
  .openapi("DiscoveryPreview");

export const ConnectorToolEntry = ToolDefinitionSchema.extend({
  visibility: z.enum(ENTRY_VISIBILITIES),
  /** When set, only members of these teams see and call the tool. */
  teams: z.array(z.string()).optional(),
}).openapi("ConnectorToolEntry");
export const ConnectorToolList = z.object({ items: z.array(ConnectorToolEntry) }).openapi("ConnectorToolList");

export const SetVisibilityBody = z
  .strictObject({
    visibility: z.enum(ENTRY_VISIBILITIES),
    teams: z.array(z.string().min(1).max(64)).max(100).optional(),
  })
  .openapi("SetEntryVisibility");
export const EntryVisibility = z
  .object({ entryName: z.string(), visibility: z.enum(ENTRY_VISIBILITIES), teams: z.array(z.string()).optional() })
  .openapi("EntryVisibility");

export const AttachCredentialBody = z
  .strictObject({ credentialId: z.string().min(1).max(64) })
  .openapi("AttachConnectorCredential");

export const PendingSpecSchema = z
  .object({
    id: z.string(),
    connectorId: z.string(),
    status: z.enum(PENDING_SPEC_STATUSES),
    /** The connector version this spec was discovered against; promoting it after another promotion is a 409. */
    baseVersion: z.number().int(),
    toolCount: z.number().int(),
    warnings: z.array(SkippedOperationSchema),
    createdAt: Timestamp,
    promotedAt: Timestamp.optional(),
    promotedBy: z.string().optional(),
  })
  .openapi("PendingSpec");
export const PendingSpecList = z.object({ items: z.array(PendingSpecSchema) }).openapi("PendingSpecList");

export const DiscoverResult = z
  .object({
    /** False when the source matches the current version or an existing pending spec: nothing was stored. */
    changed: z.boolean().describe("Whether the source differs from the current version (a pending spec was stored)"),
    pendingSpec: PendingSpecSchema.optional(),
  })
  .openapi("DiscoverResult");

export const SchemaChange = z.object({
  /** JSON Pointer into the tool's input or output schema (`/inputSchema/properties/limit`). */
  pointer: z.string(),
  change: z.enum(["added", "removed", "changed"]),
});
export const SpecDiff = z
  .object({
    added: z.array(z.string()),
    removed: z.array(z.string()),
    changed: z
      .array(
        z.object({
          name: z.string(),
          descriptionChanged: z.boolean(),
          schemaChanges: z.array(SchemaChange),
        }),
      )
      .describe("Tools present in both whose description or schemas differ"),
  })
  .openapi("SpecDiff");

export const PromoteResult = z
  .object({ connector: ConnectorSchema, pendingSpec: PendingSpecSchema })
  .openapi("PromoteResult");

export const CallToolBody = z
  .strictObject({
    name: z.string().min(1).max(128).describe("The tool's name, as the connector's tool list shows it"),
    arguments: JsonObject().default({}),
  })
  .openapi("CallTool");

/** The MCP `CallToolResult` shape: content blocks, `isError` for a failed call (upstream 4xx/5xx). */
export const CallToolResultSchema = z
  .object({
    content: z.array(z.record(z.string(), z.unknown())),
    structuredContent: z.record(z.string(), z.unknown()).optional(),
    isError: z.boolean().optional(),
  })
  .openapi("CallToolResult");
export type CallToolResultBody = z.infer<typeof CallToolResultSchema>;

export const ConnectorIdParams = z.object({ connectorId: pathParam("connectorId", "mcp_01jc2x3y4z5a6b7c8d9e0f1g2h") });
export const ServerIdParams = z.object({ serverId: pathParam("serverId", "mcp_01jc2x3y4z5a6b7c8d9e0f1g2h") });
export const ProjectServerParams = ServerIdParams.extend({
  projectId: pathParam("projectId", "prj_01jc2x3y4z5a6b7c8d9e0f1g2h"),
});
export const PendingSpecParams = ConnectorIdParams.extend({
  specId: pathParam("specId", "pspec_01jc2x3y4z5a6b7c8d9e0f1g2h"),
});
export const EntryParams = ConnectorIdParams.extend({
  entryName: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name: "entryName", in: "path" }, example: "listInvoices" }),
});
