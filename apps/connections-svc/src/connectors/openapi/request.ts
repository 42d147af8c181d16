import { isDotSegment } from "@agentplane/service-kit";
import type { ConnectorTool } from "./tools.ts";

export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Builds the HTTP request of an HTTP connector tool from validated arguments: path parameters are
 * percent-encoded (arrays comma-joined, the OpenAPI `simple` style), query arrays repeat the key
 * (`form`, explode) or are comma-joined when `explode: false`, objects use `deepObject` when asked.
 */
export function buildHttpRequest(tool: ConnectorTool, args: Record<string, unknown>, baseUrl: string): BuiltRequest {
  const op = tool.operation;
  if (!op) throw new Error(`tool ${tool.name} has no HTTP operation`);
  let path = op.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = { accept: "application/json" };
  const bodyProps: Record<string, unknown> = {};
  for (const binding of op.args) {
    const value = argument(args, binding.arg);
    if (value === undefined) continue;
    switch (binding.in) {
      case "path":
        path = path.replaceAll(`{${binding.name}}`, encodeURIComponent(simple(value)));
        break;
      case "query":
        appendQuery(query, binding.name, value, binding.style, binding.explode);
        break;
      case "header":
        headers[binding.name.toLowerCase()] = simple(value);
        break;
      case "body":
        bodyProps[binding.name] = value;
        break;
    }
  }
  // Never sent with a segment an argument made `.` or `..`: the URL would resolve it, and the
  // call would reach another path of the API than the tool's (arguments are checked before).
  if (path.split("/").some(isDotSegment)) {
    throw new Error(`tool ${tool.name}: an argument makes a dot segment of ${op.path}`);
  }
  // The base URL's own query (a key some APIs take there) stays first; the tool's parameters follow.
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`;
  const qs = query.toString();
  if (qs) url.search = url.search.length > 1 ? `${url.search.slice(1)}&${qs}` : qs;
  const request: BuiltRequest = { method: op.method.toUpperCase(), url: url.href, headers };
  if (op.body) {
    const payload = op.body.mode === "whole" ? argument(args, op.body.bodyArg ?? "body") : bodyProps;
    const hasPayload = op.body.mode === "whole" ? payload !== undefined : Object.keys(bodyProps).length > 0;
    if (hasPayload || op.body.required) {
      const form = op.body.contentType.toLowerCase().startsWith("application/x-www-form-urlencoded");
      headers["content-type"] = form ? "application/x-www-form-urlencoded" : contentTypeOf(op.body.contentType);
      request.body = form ? formEncode(payload) : JSON.stringify(payload ?? {});
    }
  }
  return request;
}

/**
 * Arguments the request cannot carry as the operation means them, as field errors (the schema's
 * `string` lets them through): a header value with a line break or NUL (HTTP has no way to send
 * one), and path segments that arguments leave empty, `.` or `..` (the URL would resolve them and
 * the call reach another path of the API, with the connector's credentials).
 */
export function unsendableArguments(
  tool: ConnectorTool,
  args: Record<string, unknown>,
  pointerBase: string,
): { pointer: string; message: string }[] {
  const errors: { pointer: string; message: string }[] = [];
  const pointer = (arg: string) => `${pointerBase}/${arg.replaceAll("~", "~0").replaceAll("/", "~1")}`;
  const bindings = tool.operation?.args ?? [];
  for (const binding of bindings) {
    const value = argument(args, binding.arg);
    if (binding.in !== "header" || value === undefined) continue;
    if (/[\r\n\0]/.test(simple(value))) {
      errors.push({
        pointer: pointer(binding.arg),
        message: `is sent as the ${binding.name} header, which cannot contain a line break or NUL`,
      });
    }
  }
  for (const segment of (tool.operation?.path ?? "").split("/")) {
    if (!segment.includes("{")) continue;
    let filled = segment;
    const used: string[] = [];
    for (const binding of bindings) {
      const value = argument(args, binding.arg);
      if (binding.in !== "path" || value === undefined || !segment.includes(`{${binding.name}}`)) continue;
      used.push(binding.arg);
      filled = filled.replaceAll(`{${binding.name}}`, encodeURIComponent(simple(value)));
    }
    if (used.length === 0 || (filled !== "" && !isDotSegment(filled))) continue;
    for (const arg of used) {
      errors.push({
        pointer: pointer(arg),
        message: `makes the path segment ${segment} ${filled === "" ? "empty" : `"${filled}"`}, which would address another path`,
      });
    }
  }
  return errors;
}

/** The argument the caller gave, never a property every object inherits (`constructor`, `toString`). */
function argument(args: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(args, name) ? args[name] : undefined;
}

function contentTypeOf(type: string): string {
  return type.includes("*") ? "application/json" : type;
}

function simple(value: unknown): string {
  if (Array.isArray(value)) return value.map((v) => scalar(v)).join(",");
  if (value && typeof value === "object") {
    return Object.entries(value)
      .flatMap(([k, v]) => [k, scalar(v)])
      .join(",");
  }
  return scalar(value);
}

function scalar(value: unknown): string {
  if (value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function appendQuery(query: URLSearchParams, name: string, value: unknown, style?: string, explode?: boolean): void {
  const exploded = explode ?? true;
  if (Array.isArray(value)) {
    const sep = style === "pipeDelimited" ? "|" : style === "spaceDelimited" ? " " : ",";
    if (exploded && style !== "pipeDelimited" && style !== "spaceDelimited") {
      for (const v of value) query.append(name, scalar(v));
    } else query.append(name, value.map((v) => scalar(v)).join(sep));
    return;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (style === "deepObject") for (const [k, v] of entries) query.append(`${name}[${k}]`, scalar(v));
    else if (exploded) for (const [k, v] of entries) query.append(k, scalar(v));
    else query.append(name, simple(value));
    return;
  }
  query.append(name, scalar(value));
}

function formEncode(payload: unknown): string {
  const form = new URLSearchParams();
  if (payload && typeof payload === "object") {
    for (const [k, v] of Object.entries(payload as Record<string, unknown>)) {
      if (Array.isArray(v)) for (const item of v) form.append(k, scalar(item));
      else if (v !== undefined) form.append(k, scalar(v));
    }
  }
  return form.toString();
}
