/**
 * Generates a large, realistic OpenAPI description: a commerce/billing style API with `resources`
 * collections, each with list/create/get/replace/update/delete plus an action and a search, shared
 * component schemas referenced with `$ref` (including self-references), path-level parameters, header
 * parameters, query arrays and a few operations that cannot become tools (file uploads).
 */
const NOUNS = [
  "account",
  "invoice",
  "customer",
  "subscription",
  "payment",
  "refund",
  "product",
  "price",
  "coupon",
  "discount",
  "order",
  "shipment",
  "warehouse",
  "supplier",
  "employee",
  "team",
  "project",
  "task",
  "ticket",
  "comment",
  "webhook",
  "event",
  "report",
  "dashboard",
  "widget",
  "dataset",
  "pipeline",
  "job",
  "schedule",
  "alert",
  "incident",
  "runbook",
  "service",
  "deployment",
  "release",
  "artifact",
  "repository",
  "branch",
  "review",
  "label",
  "document",
  "folder",
  "template",
  "contract",
  "quote",
  "lead",
  "opportunity",
  "campaign",
  "segment",
  "audience",
  "message",
  "channel",
  "thread",
  "notification",
  "device",
  "location",
  "region",
  "zone",
  "network",
  "volume",
  "snapshot",
  "image",
  "secret",
  "certificate",
  "domain",
  "record",
  "mailbox",
  "calendar",
  "meeting",
  "room",
  "vendor",
  "budget",
  "expense",
  "ledger",
  "journal",
  "asset",
  "license",
  "policy",
  "role",
  "member",
];

export interface LargeDescriptionOptions {
  resources?: number;
  version?: "3.0.3" | "3.1.0";
  serverUrl?: string;
  /** Changes the description a little (one operation added, one removed, one schema changed). */
  revision?: number;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function generateLargeDescription(options: LargeDescriptionOptions = {}): Record<string, unknown> {
  const count = Math.min(options.resources ?? 60, NOUNS.length);
  const version = options.version ?? "3.0.3";
  const revision = options.revision ?? 0;
  const nullable = (schema: Record<string, unknown>) =>
    version === "3.0.3" ? { ...schema, nullable: true } : { ...schema, type: [schema.type, "null"] };
  const schemas: Record<string, unknown> = {
    Error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string" }, message: { type: "string" } },
    },
    Metadata: { type: "object", additionalProperties: { type: "string" }, maxProperties: 50 },
    Page: {
      type: "object",
      properties: { nextCursor: nullable({ type: "string" }), total: { type: "integer", minimum: 0 } },
    },
    Address: {
      type: "object",
      properties: {
        line1: { type: "string" },
        city: { type: "string" },
        country: { type: "string", pattern: "^[A-Z]{2}$" },
      },
      required: ["line1", "country"],
    },
  };
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const noun = NOUNS[i] as string;
    const Type = cap(noun);
    const plural = `${noun}s`;
    schemas[Type] = {
      type: "object",
      description: `A ${noun}.`,
      required: ["name"],
      properties: {
        id: { type: "string", readOnly: true },
        name: { type: "string", minLength: 1, maxLength: 200 },
        status: { type: "string", enum: ["active", "archived", ...(revision > 0 && i === 0 ? ["paused"] : [])] },
        amount: { type: "number", minimum: 0 },
        metadata: { $ref: "#/components/schemas/Metadata" },
        address: { $ref: "#/components/schemas/Address" },
        parent: { $ref: `#/components/schemas/${Type}` },
        createdAt: { type: "string", format: "date-time", readOnly: true },
      },
    };
    schemas[`${Type}List`] = {
      allOf: [
        { $ref: "#/components/schemas/Page" },
        { type: "object", properties: { items: { type: "array", items: { $ref: `#/components/schemas/${Type}` } } } },
      ],
    };
    const item = { $ref: `#/components/schemas/${Type}` };
    const json = (schema: unknown) => ({ content: { "application/json": { schema } } });
    const errors = { "404": { description: "Not found", ...json({ $ref: "#/components/schemas/Error" }) } };
    const idParam = { name: `${noun}Id`, in: "path", required: true, schema: { type: "string" } };
    paths[`/${plural}`] = {
      get: {
        operationId: `list${Type}s`,
        tags: [Type],
        summary: `List ${plural}`,
        parameters: [
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
          { name: "cursor", in: "query", schema: { type: "string" } },
          { name: "status", in: "query", schema: { type: "array", items: { type: "string" } } },
          { name: "X-Request-Id", in: "header", schema: { type: "string" } },
        ],
        responses: { "200": { description: "A page", ...json({ $ref: `#/components/schemas/${Type}List` }) } },
      },
      post: {
        operationId: `create${Type}`,
        tags: [Type, "write"],
        summary: `Create a ${noun}`,
        description: `Creates a ${noun}. Names need not be unique.`,
        requestBody: { required: true, ...json(item) },
        responses: { "201": { description: "Created", ...json(item) } },
      },
    };
    paths[`/${plural}/{${noun}Id}`] = {
      parameters: [idParam],
      get: {
        operationId: `get${Type}`,
        tags: [Type],
        summary: `Get a ${noun}`,
        responses: { "200": { description: "The item", ...json(item) }, ...errors },
      },
      put: {
        operationId: `replace${Type}`,
        tags: [Type, "write"],
        requestBody: { required: true, ...json(item) },
        responses: { "200": { description: "Replaced", ...json(item) }, ...errors },
      },
      patch: {
        operationId: `update${Type}`,
        tags: [Type, "write"],
        summary: `Update a ${noun}`,
        requestBody: {
          ...json({ type: "object", properties: { name: { type: "string" }, amount: { type: "number" } } }),
        },
        responses: { "200": { description: "Updated", ...json(item) }, ...errors },
      },
      delete: {
        operationId: `delete${Type}`,
        tags: [Type, "write"],
        summary: `Delete a ${noun}`,
        responses: { "204": { description: "Deleted" }, ...errors },
      },
    };
    if (!(revision > 0 && i === 1)) {
      paths[`/${plural}/{${noun}Id}/archive`] = {
        post: {
          // No operationId: named from method and path.
          tags: [Type, "write"],
          summary: `Archive a ${noun}`,
          parameters: [idParam, { name: "reason", in: "query", schema: { type: "string" } }],
          responses: { "200": { description: "Archived", ...json(item) } },
        },
      };
    }
    paths[`/${plural}/search`] = {
      post: {
        operationId: `search${Type}s`,
        tags: [Type],
        requestBody: {
          ...json({
            type: "object",
            properties: { query: { type: "string" }, filters: { type: "array", items: { type: "string" } } },
          }),
        },
        responses: { "200": { description: "Matches", ...json({ $ref: `#/components/schemas/${Type}List` }) } },
      },
    };
    if (i % 10 === 0) {
      paths[`/${plural}/{${noun}Id}/attachments`] = {
        post: {
          operationId: `upload${Type}Attachment`,
          tags: [Type, "files"],
          parameters: [idParam],
          requestBody: { required: true, content: { "application/octet-stream": { schema: { type: "string" } } } },
          responses: { "201": { description: "Uploaded" } },
        },
      };
    }
  }
  if (revision > 0) {
    paths["/health"] = {
      get: { operationId: "getHealth", summary: "Liveness", responses: { "200": { description: "OK" } } },
    };
  }
  if (revision > 1) {
    paths["/status"] = {
      get: { operationId: "getStatus", summary: "Service status", responses: { "200": { description: "OK" } } },
    };
  }
  return {
    openapi: version,
    info: { title: "Generated Commerce API", version: `1.${revision}.0` },
    servers: [{ url: options.serverUrl ?? "https://api.example.test/v2" }],
    paths,
    components: { schemas },
  };
}
