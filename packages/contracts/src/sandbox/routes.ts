import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
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
  UpdatedSandboxSchema,
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

export const listSandboxesRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "listSandboxes",
    summary: "List sandboxes",
    description: "The project's sandboxes, newest first, filtered by state or label selector, cursor-paged.",
    method: "get",
    path: "/v1/projects/{projectId}/sandboxes",
    tags: ["Sandboxes"],
    request: { params: ProjectParams, query: SandboxListQuery },
    responses: { 200: json(CursorPage(SandboxSchema), "Sandboxes, newest first") },
  },
);

export const createSandboxRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "createSandbox",
    summary: "Create a sandbox",
    description:
      "Creates an isolated workspace (image, command, environment, resources, ports, labels) as revision 1, started at once with `start: true`. Admission is checked against the project's policies (`sandbox:create`); audited. A project holds at most 1000 sandboxes and an organization runs at most 100 at once unless the operator sets other limits; a start refused at that limit still creates the sandbox (pending) and answers the 409.",
    method: "post",
    path: "/v1/projects/{projectId}/sandboxes",
    tags: ["Sandboxes"],
    request: { params: ProjectParams, body: body(CreateSandboxRequest) },
    responses: {
      201: json(SandboxSchema, "Created (started when `start` is true)"),
      ...limitedCreateConflict(["sandboxes", "running-sandboxes"], "The slug is taken (`conflict`)"),
    },
  },
);

export const getSandboxRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "getSandbox",
    summary: "Get a sandbox",
    description: "One sandbox with its current spec, state and last activity.",
    method: "get",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}",
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 200: json(SandboxSchema, "The sandbox") },
  },
);

export const updateSandboxRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "updateSandbox",
    summary: "Update a sandbox",
    description:
      "Changes the spec as a new revision. A running sandbox is restarted with it: its processes and sessions end, and the answer says `restarted: true`. Name and labels alone change no revision and restart nothing. Checked against policy (`sandbox:update`); audited.",
    method: "patch",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}",
    tags: ["Sandboxes"],
    request: { params: SandboxParams, body: body(UpdateSandboxRequest) },
    responses: {
      200: json(
        UpdatedSandboxSchema,
        "Updated; `restarted` says whether a running sandbox was restarted onto the change",
      ),
    },
  },
);

export const deleteSandboxRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "deleteSandbox",
    description: "Stops the sandbox if it runs and deletes it with its workspace and revisions; audited.",
    summary: "Delete a sandbox",
    method: "delete",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}",
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 204: { description: "Deleted with its workspace and tokens" } },
  },
);

export const startSandboxRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "startSandbox",
    summary: "Start a sandbox",
    description:
      "Starts a stopped sandbox with its current revision. Checked against policy (`sandbox:start`) and the organization's limit of sandboxes up at once (100 unless the operator sets another); audited.",
    method: "post",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}/start",
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: {
      200: json(SandboxSchema, "Running"),
      ...limitedCreateConflict(
        "running-sandboxes",
        "The sandbox is starting, stopping or being deleted, or a stop or delete overtook this start (`invalid-transition`)",
      ),
    },
  },
);

export const stopSandboxRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "stopSandbox",
    summary: "Stop a sandbox",
    description: "Stops the sandbox's processes; the workspace is kept.",
    method: "post",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}/stop",
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 200: json(SandboxSchema, "Stopped") },
  },
);

export const listSandboxRevisionsRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "listSandboxRevisions",
    summary: "List revisions",
    description: "Every revision of the sandbox's spec, newest first, with who made it.",
    method: "get",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}/revisions",
    tags: ["Sandboxes"],
    request: { params: SandboxParams },
    responses: { 200: json(z.object({ items: z.array(SandboxRevisionSchema) }), "Revisions, newest first") },
  },
);

export const rollbackSandboxRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:write" },
  {
    operationId: "rollbackSandbox",
    summary: "Roll back a sandbox",
    description: "Makes a new revision with an earlier revision's spec; a running sandbox restarts with it.",
    method: "post",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}/rollback",
    tags: ["Sandboxes"],
    request: { params: SandboxParams, body: body(RollbackRequest) },
    responses: { 200: json(SandboxSchema, "A new revision with the old spec; a running sandbox is restarted") },
  },
);

export const execSandboxStreamRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:exec", websocket: true },
  {
    operationId: "execSandboxStream",
    summary: "Exec in a sandbox over WebSocket",
    method: "get",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}/exec",
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

export const execShellRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:exec" },
  {
    operationId: "execShell",
    summary: "Run a command",
    description:
      "Runs one command in a sandbox (an argv array, or a string for `sh -c`) with stdin, cwd, env and a timeout; returns exit code, capped stdout and stderr. Checked against policy (`sandbox:exec`); audited with the command and exit code, never the output.",
    method: "post",
    path: "/v1/shell/exec",
    tags: ["Shell"],
    request: { body: body(ExecRequest) },
    responses: { 200: json(ExecResultSchema, "The command ran (any exit code)") },
  },
);

export const createShellSessionRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:exec" },
  {
    operationId: "createShellSession",
    summary: "Open a shell session",
    description:
      "Opens a shell in a running sandbox that keeps its working directory and exported variables between commands. A sandbox has at most 32 open sessions at once: past that, a 409 `limit-exceeded` (kind `shell-sessions`) until one is closed or expires.",
    method: "post",
    path: "/v1/projects/{projectId}/shell-sessions",
    tags: ["Shell"],
    request: { params: ProjectParams, body: body(CreateShellSessionRequest) },
    responses: { 201: json(ShellSessionSchema, "A persistent shell") },
  },
);

export const listShellSessionsRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "listShellSessions",
    summary: "List shell sessions",
    description: "The project's open shell sessions.",
    method: "get",
    path: "/v1/projects/{projectId}/shell-sessions",
    tags: ["Shell"],
    request: { params: ProjectParams },
    responses: { 200: json(z.object({ items: z.array(ShellSessionSchema) }), "Open sessions") },
  },
);

export const getShellSessionRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:read" },
  {
    operationId: "getShellSession",
    summary: "Get a shell session",
    description: "One shell session with its working directory and last activity.",
    method: "get",
    path: "/v1/projects/{projectId}/shell-sessions/{sessionId}",
    tags: ["Shell"],
    request: { params: SessionParams },
    responses: { 200: json(ShellSessionSchema, "The session") },
  },
);

export const deleteShellSessionRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:exec" },
  {
    operationId: "deleteShellSession",
    description: "Ends the session's shell.",
    summary: "Close a shell session",
    method: "delete",
    path: "/v1/projects/{projectId}/shell-sessions/{sessionId}",
    tags: ["Shell"],
    request: { params: SessionParams },
    responses: { 204: { description: "Closed" } },
  },
);

export const runShellSessionCommandRoute = defineRoute(
  { service: "sandbox", access: "sandboxes:exec" },
  {
    operationId: "runShellSessionCommand",
    summary: "Run a command in a session",
    description:
      "Runs a command in the session's shell, keeping its working directory and variables; returns exit code and capped output.",
    method: "post",
    path: "/v1/projects/{projectId}/shell-sessions/{sessionId}/commands",
    tags: ["Shell"],
    request: { params: SessionParams, body: body(ShellSessionCommandRequest) },
    responses: { 200: json(ExecResultSchema, "The command ran in the session's shell") },
  },
);

export const createSandboxTokenRoute = defineRoute(
  { service: "sandbox", access: "sandbox-tokens:manage" },
  {
    operationId: "createSandboxToken",
    summary: "Create a sandbox token",
    description:
      "Mints a token (`apsb_…`) for a workload in a sandbox: it acts only inside that project with the scopes given. The secret is in this response only.",
    method: "post",
    path: "/v1/projects/{projectId}/sandbox-tokens",
    tags: ["Sandbox tokens"],
    request: { params: ProjectParams, body: body(CreateSandboxTokenRequest) },
    responses: { 201: json(CreatedSandboxTokenSchema, "The secret is shown once") },
  },
);

export const listSandboxTokensRoute = defineRoute(
  { service: "sandbox", access: "sandbox-tokens:manage" },
  {
    operationId: "listSandboxTokens",
    summary: "List sandbox tokens",
    description: "The project's sandbox tokens, without secrets.",
    method: "get",
    path: "/v1/projects/{projectId}/sandbox-tokens",
    tags: ["Sandbox tokens"],
    request: { params: ProjectParams },
    responses: { 200: json(z.object({ items: z.array(SandboxTokenSchema) }), "Active tokens") },
  },
);

export const getSandboxTokenRoute = defineRoute(
  { service: "sandbox", access: "sandbox-tokens:manage" },
  {
    operationId: "getSandboxToken",
    summary: "Get a sandbox token",
    description: "One sandbox token's metadata, never its secret.",
    method: "get",
    path: "/v1/sandbox-tokens/{id}",
    tags: ["Sandbox tokens"],
    request: { params: TokenParams },
    responses: { 200: json(SandboxTokenSchema, "The token (never its secret)") },
  },
);

export const deleteSandboxTokenRoute = defineRoute(
  { service: "sandbox", access: "sandbox-tokens:manage" },
  {
    operationId: "deleteSandboxToken",
    description: "Revokes the token; the gateway rejects it within seconds.",
    summary: "Revoke a sandbox token",
    method: "delete",
    path: "/v1/sandbox-tokens/{id}",
    tags: ["Sandbox tokens"],
    request: { params: TokenParams },
    responses: { 204: { description: "Revoked" } },
  },
);

/** Every `/v1` sandbox operation of this file, by name (in the order the OpenAPI document lists them). */
export const sandboxApiRoutes = [
  createSandboxRoute,
  createSandboxTokenRoute,
  createShellSessionRoute,
  deleteSandboxRoute,
  deleteSandboxTokenRoute,
  deleteShellSessionRoute,
  execSandboxStreamRoute,
  execShellRoute,
  getSandboxRoute,
  getSandboxTokenRoute,
  getShellSessionRoute,
  listSandboxRevisionsRoute,
  listSandboxTokensRoute,
  listSandboxesRoute,
  listShellSessionsRoute,
  rollbackSandboxRoute,
  runShellSessionCommandRoute,
  startSandboxRoute,
  stopSandboxRoute,
  updateSandboxRoute,
] as const;
