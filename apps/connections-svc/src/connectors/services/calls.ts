import { type CallToolResultBody, jsonNestsDeeperThan, MAX_JSON_DEPTH, type Principal } from "@agentplane/contracts";
import { badRequest, notFound } from "@agentplane/problem-details";
import { FetchRefusedError } from "@agentplane/service-kit/outbound";
import type { ErrorObject } from "ajv";
import type { ConnectionsContext } from "../../context.ts";
import { buildHttpRequest, unsendableArguments } from "../openapi/request.ts";
import type { ConnectorTool } from "../openapi/tools.ts";
import { credentialHeaders, decideToolCall } from "./platform.ts";
import type { ConnectorRuntime, LoadedTools } from "./runtime.ts";
import { type ConnectorRow, connectorCredentials, fromJsonb } from "./store.ts";
import { upstreamProblem } from "./upstream-problem.ts";
import { withoutUrlCredentials } from "./url-credentials.ts";
import { isVisibleTo, type ToolViewer } from "./visibility.ts";

const MAX_TEXT = 1024 * 1024;

export interface ToolCaller extends ToolViewer {
  principal: Principal;
  requestId?: string | undefined;
}

export class ToolCallDenied extends Error {
  readonly ruleId: string | undefined;
  readonly policyId: string | undefined;
  constructor(tool: string, ruleId: string | undefined, policyId: string | undefined) {
    super(
      ruleId ? `tool:call of ${tool} is denied by policy rule ${ruleId}` : `tool:call of ${tool} is denied by policy`,
    );
    this.ruleId = ruleId;
    this.policyId = policyId;
  }
}

/** The tool, or 404 when it does not exist or is hidden from this caller. */
export async function findCallableTool(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  row: ConnectorRow,
  name: string,
  viewer: ToolViewer,
): Promise<{ tool: ConnectorTool; loaded: LoadedTools }> {
  const loaded = await runtime.tools(ctx.db, row);
  const tool = loaded.byName.get(name);
  const settings = tool ? await runtime.index.entrySettings(ctx.db, [row]) : undefined;
  if (!tool || !isVisibleTo(settings?.get(`${row.id}/${name}`), viewer)) {
    throw notFound(`Tool ${name} of connector`, row.id);
  }
  return { tool, loaded };
}

/**
 * Calls a tool: arguments validated against its input schema (400 with JSON pointers), then the
 * governance decision `tool:call` (an enforced deny throws `ToolCallDenied`), then the call itself.
 * The audit record names connector, tool, caller, decision, duration and status; never arguments'
 * values or the result.
 */
export async function callTool(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  row: ConnectorRow,
  caller: ToolCaller,
  name: string,
  args: Record<string, unknown>,
  pointerBase = "/body/arguments",
): Promise<CallToolResultBody> {
  const started = performance.now();
  const { tool, loaded } = await findCallableTool(ctx, runtime, row, name, caller);
  if (jsonNestsDeeperThan(args)) {
    throw badRequest(`The arguments of ${name} nest too deep`, [
      { pointer: pointerBase, message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
  }
  const validate = runtime.validator(loaded, tool);
  if (!validate(args)) {
    throw badRequest(
      `The arguments do not match the input schema of ${name}`,
      toFieldErrors(validate.errors ?? [], pointerBase),
    );
  }
  const unsendable = unsendableArguments(tool, args, pointerBase);
  if (unsendable.length > 0) throw badRequest(`The arguments of ${name} cannot be sent`, unsendable);
  const request = {
    principal: caller.principal,
    action: "tool:call" as const,
    resource: {
      type: "Tool" as const,
      id: `${row.name}__${name}`,
      orgId: row.org_id,
      projectId: row.project_id,
      kind: "connector",
    },
    context: { connectorId: row.id, tool: name },
  };
  const decision = await decideToolCall(ctx, runtime.decisions, request, caller.requestId);
  const deny = decision.decision === "deny" && decision.enforced;
  const reason = decision.reasons.find((r) => r.mode === "enforce") ?? decision.reasons[0];
  const audit = (outcome: "success" | "denied" | "error", extra: Record<string, unknown>) =>
    runtime.audit.record(caller.principal, {
      action: "connector.tool_called",
      orgId: row.org_id,
      projectId: row.project_id,
      targetType: "connector",
      targetId: row.id,
      outcome,
      details: {
        tool: name,
        decision: decision.decision,
        ...(reason ? { ruleId: reason.ruleId, policyId: reason.policyId } : {}),
        argumentNames: Object.keys(args).sort(),
        durationMs: Math.round(performance.now() - started),
        ...extra,
      },
      requestId: caller.requestId,
    });
  if (deny) {
    await audit("denied", {});
    throw new ToolCallDenied(name, reason?.ruleId, reason?.policyId);
  }
  let result: { body: CallToolResultBody; isError?: boolean; status?: number };
  try {
    result =
      row.kind === "mcp"
        ? await callRemoteTool(ctx, runtime, row, name, args)
        : await callHttpTool(ctx, runtime, row, tool, args);
  } catch (raw) {
    const error = withoutUrlCredentials(raw, connectorCredentials(row));
    await audit("error", { error: error instanceof FetchRefusedError ? error.reason : "failed" });
    if (error instanceof FetchRefusedError) throw upstreamProblem(error, `Connector ${row.name}`);
    throw error;
  }
  await audit(result.isError ? "error" : "success", {
    ...(result.status ? { status: result.status } : {}),
    isError: !!result.isError,
  });
  return result.body;
}

async function callRemoteTool(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  row: ConnectorRow,
  name: string,
  args: Record<string, unknown>,
): Promise<{ body: CallToolResultBody; isError?: boolean; status?: number }> {
  const headers = await callHeaders(ctx, runtime, row);
  const key = `${row.id}:${row.updated_at instanceof Date ? row.updated_at.getTime() : String(row.updated_at)}`;
  const result = await runtime.pool.callTool(key, { url: row.url ?? "", headers }, name, args);
  const body: CallToolResultBody = {
    content: (result.content ?? []) as Array<Record<string, unknown>>,
    ...(result.structuredContent ? { structuredContent: result.structuredContent as Record<string, unknown> } : {}),
    ...(result.isError ? { isError: true } : {}),
  };
  return { body, ...(result.isError ? { isError: true } : {}) };
}

async function callHttpTool(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  row: ConnectorRow,
  tool: ConnectorTool,
  args: Record<string, unknown>,
): Promise<{ body: CallToolResultBody; isError?: boolean; status: number }> {
  const request = buildHttpRequest(tool, args, row.base_url ?? "");
  // The credential goes on last, so a parameter can never replace it.
  const headers = { ...request.headers, ...(await callHeaders(ctx, runtime, row)) };
  const response = await runtime.fetcher.fetchBody(
    request.url,
    { method: request.method, headers, ...(request.body !== undefined ? { body: request.body } : {}) },
    { acceptErrors: true },
  );
  const text = response.body.subarray(0, MAX_TEXT).toString("utf8");
  const isError = response.status >= 400;
  let structured: Record<string, unknown> | undefined;
  if (!isError && /json/i.test(response.headers.get("content-type") ?? "")) {
    try {
      const parsed = JSON.parse(text) as unknown;
      // Too deep to answer as JSON (the stack overflows): the text block carries it.
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && !jsonNestsDeeperThan(parsed))
        structured = parsed as Record<string, unknown>;
    } catch {
      // Not JSON after all: the text block carries it.
    }
  }
  const body: CallToolResultBody = {
    content: [{ type: "text", text: isError ? `HTTP ${response.status}: ${text}` : text }],
    ...(structured ? { structuredContent: structured } : {}),
    ...(isError ? { isError: true } : {}),
  };
  return { body, status: response.status, ...(isError ? { isError: true } : {}) };
}

/** Static headers plus the credential's header, resolved through governance at most every few seconds. */
async function callHeaders(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  row: ConnectorRow,
): Promise<Record<string, string>> {
  const headers = { ...(fromJsonb<Record<string, string>>(row.headers) ?? {}) };
  const credentialId = row.credential_id;
  if (credentialId) {
    Object.assign(
      headers,
      await runtime.index.credentialHeaders(row.project_id, credentialId, () =>
        credentialHeaders(ctx, credentialId, row.project_id),
      ),
    );
  }
  return headers;
}

function toFieldErrors(errors: ErrorObject[], base: string) {
  return errors.slice(0, 20).map((e) => {
    const missing =
      e.keyword === "required" ? `/${String((e.params as { missingProperty?: string }).missingProperty)}` : "";
    return { pointer: `${base}${e.instancePath}${missing}`, message: e.message ?? e.keyword };
  });
}
