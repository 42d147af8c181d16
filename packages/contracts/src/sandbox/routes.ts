import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { CursorPage, pathParam } from "../common/schemas.ts";
import {
  CreatedSandboxTokenSchema,
  CreateSandboxRequest,
  CreateSandboxTokenRequest,
  CreateShellSessionRequest,
  ExecRequest,
  ExecResultSchema,
  RollbackRequest,
  SandboxListQuery,
  SandboxRevisionSchema,
  SandboxSchema,
  SandboxTokenSchema,
  ShellSessionCommandRequest,
  ShellSessionSchema,
  UpdateSandboxRequest,
} from "./schemas.ts";

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});
const body = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

const ProjectParams = z.object({ projectId: pathParam("projectId", "prj_01j0000000000000000000000") });
const SandboxParams = ProjectParams.extend({ sandboxId: pathParam("sandboxId", "sbx_01j0000000000000000000000") });
const SessionParams = ProjectParams.extend({ sessionId: pathParam("sessionId", "shs_01j0000000000000000000000") });
const TokenParams = z.object({ id: pathParam("id", "sbt_01j0000000000000000000000") });

const SANDBOXES = "/v1/projects/{projectId}/sandboxes";
const SANDBOX = `${SANDBOXES}/{sandboxId}`;
const SESSIONS = "/v1/projects/{projectId}/shell-sessions";

export const listSandboxes = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "listSandboxes",
    method: "get",
    path: SANDBOXES,
    tags: ["Sandboxes"],
    request: { params: ProjectParams, query: SandboxListQuery },
    responses: { 200: json(CursorPage(SandboxSchema), "Sandboxes, newest first") },
  },
);

export const createSandbox = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "createSandbox",
    method: "post",
    path: SANDBOXES,
    tags: ["Sandboxes"],
    request: { params: ProjectParams, body: body(CreateSandboxRequest) },
    responses: { 201: json(SandboxSchema, "Created (started when `start` is true)") },
  },
);

export const getSandbox = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "getSandbox",
    method: "get",
    path: SANDBOX,
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 200: json(SandboxSchema, "The sandbox") },
  },
);

export const updateSandbox = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "updateSandbox",
    method: "patch",
    path: SANDBOX,
    tags: ["Sandboxes"],
    request: { params: SandboxParams, body: body(UpdateSandboxRequest) },
    responses: { 200: json(SandboxSchema, "Updated; a spec change creates a revision and restarts a running sandbox") },
  },
);

export const deleteSandbox = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "deleteSandbox",
    method: "delete",
    path: SANDBOX,
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 204: { description: "Deleted with its workspace and tokens" } },
  },
);

export const startSandbox = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "startSandbox",
    method: "post",
    path: `${SANDBOX}/start`,
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 200: json(SandboxSchema, "Running") },
  },
);

export const stopSandbox = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "stopSandbox",
    method: "post",
    path: `${SANDBOX}/stop`,
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 200: json(SandboxSchema, "Stopped") },
  },
);

export const listSandboxRevisions = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "listSandboxRevisions",
    method: "get",
    path: `${SANDBOX}/revisions`,
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 200: json(z.object({ items: z.array(SandboxRevisionSchema) }), "Revisions, newest first") },
  },
);

export const rollbackSandbox = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "rollbackSandbox",
    method: "post",
    path: `${SANDBOX}/rollback`,
    tags: ["Sandboxes"],
    request: { params: SandboxParams, body: body(RollbackRequest) },
    responses: { 200: json(SandboxSchema, "A new revision with the old spec; a running sandbox is restarted") },
  },
);

export const execSandboxStream = defineRoute(
  { service: "sandbox", access: "sandboxes:exec", websocket: true },
  {
    operationId: "execSandboxStream",
    method: "get",
    path: `${SANDBOX}/exec`,
    tags: ["Sandboxes"],
    description:
      "WebSocket, Kubernetes streaming protocol (`v5.channel.k8s.io`, `v4.channel.k8s.io`): binary frames of a channel byte (0 stdin, 1 stdout, 2 stderr, 3 status, 4 resize, 255 close) and the payload. The token may come as subprotocol `base64url.bearer.authorization.k8s.io.<token>`.",
    request: {
      params: SandboxParams,
      query: z.object({
        command: z.union([z.string(), z.array(z.string())]),
        tty: z.enum(["true", "false", "1", "0"]).optional(),
        cols: z.coerce.number().int().min(1).max(1000).optional(),
        rows: z.coerce.number().int().min(1).max(1000).optional(),
      }),
    },
    responses: { 101: { description: "Switching protocols" } },
  },
);

export const execShell = defineRoute(
  { service: "sandbox", access: "sandboxes:exec" },
  {
    operationId: "execShell",
    method: "post",
    path: "/v1/shell/exec",
    tags: ["Shell"],
    request: { body: body(ExecRequest) },
    responses: { 200: json(ExecResultSchema, "The command ran (any exit code)") },
  },
);

export const createShellSession = defineRoute(
  { service: "sandbox", access: "sandboxes:exec" },
  {
    operationId: "createShellSession",
    method: "post",
    path: SESSIONS,
    tags: ["Shell"],
    request: { params: ProjectParams, body: body(CreateShellSessionRequest) },
    responses: { 201: json(ShellSessionSchema, "A persistent shell") },
  },
);

export const listShellSessions = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "listShellSessions",
    method: "get",
    path: SESSIONS,
    tags: ["Shell"],
    request: { params: ProjectParams },
    responses: { 200: json(z.object({ items: z.array(ShellSessionSchema) }), "Open sessions") },
  },
);

export const getShellSession = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "getShellSession",
    method: "get",
    path: `${SESSIONS}/{sessionId}`,
    tags: ["Shell"],
    request: { params: SessionParams },
    responses: { 200: json(ShellSessionSchema, "The session") },
  },
);

export const deleteShellSession = defineRoute(
  { service: "sandbox", access: "sandboxes:exec" },
  {
    operationId: "deleteShellSession",
    method: "delete",
    path: `${SESSIONS}/{sessionId}`,
    tags: ["Shell"],
    request: { params: SessionParams },
    responses: { 204: { description: "Closed" } },
  },
);

export const runShellSessionCommand = defineRoute(
  { service: "sandbox", access: "sandboxes:exec" },
  {
    operationId: "runShellSessionCommand",
    method: "post",
    path: `${SESSIONS}/{sessionId}/commands`,
    tags: ["Shell"],
    request: { params: SessionParams, body: body(ShellSessionCommandRequest) },
    responses: { 200: json(ExecResultSchema, "The command ran in the session's shell") },
  },
);

export const createSandboxToken = defineRoute(
  { service: "sandbox", access: "sandbox-tokens:manage" },
  {
    operationId: "createSandboxToken",
    method: "post",
    path: "/v1/projects/{projectId}/sandbox-tokens",
    tags: ["Sandbox tokens"],
    request: { params: ProjectParams, body: body(CreateSandboxTokenRequest) },
    responses: { 201: json(CreatedSandboxTokenSchema, "The secret is shown once") },
  },
);

export const listSandboxTokens = defineRoute(
  { service: "sandbox", access: "sandbox-tokens:manage" },
  {
    operationId: "listSandboxTokens",
    method: "get",
    path: "/v1/projects/{projectId}/sandbox-tokens",
    tags: ["Sandbox tokens"],
    request: { params: ProjectParams },
    responses: { 200: json(z.object({ items: z.array(SandboxTokenSchema) }), "Active tokens") },
  },
);

export const getSandboxToken = defineRoute(
  { service: "sandbox", access: "sandbox-tokens:manage" },
  {
    operationId: "getSandboxToken",
    method: "get",
    path: "/v1/sandbox-tokens/{id}",
    tags: ["Sandbox tokens"],
    request: { params: TokenParams },
    responses: { 200: json(SandboxTokenSchema, "The token (never its secret)") },
  },
);

export const deleteSandboxToken = defineRoute(
  { service: "sandbox", access: "sandbox-tokens:manage" },
  {
    operationId: "deleteSandboxToken",
    method: "delete",
    path: "/v1/sandbox-tokens/{id}",
    tags: ["Sandbox tokens"],
    request: { params: TokenParams },
    responses: { 204: { description: "Revoked" } },
  },
);
