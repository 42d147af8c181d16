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
    const value = args[binding.arg];
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
  const qs = query.toString();
  const url = `${baseUrl.replace(/\/+$/, "")}${path}${qs ? `?${qs}` : ""}`;
  const request: BuiltRequest = { method: op.method.toUpperCase(), url, headers };
  if (op.body) {
    const payload = op.body.mode === "whole" ? args[op.body.bodyArg ?? "body"] : bodyProps;
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
 * Arguments bound to headers that no header can carry (a line break or NUL: HTTP has no way to
 * send them), as field errors; the schema's `string` lets them through.
 */
export function unsendableHeaderArguments(
  tool: ConnectorTool,
  args: Record<string, unknown>,
  pointerBase: string,
): { pointer: string; message: string }[] {
  const errors: { pointer: string; message: string }[] = [];
  for (const binding of tool.operation?.args ?? []) {
    const value = args[binding.arg];
    if (binding.in !== "header" || value === undefined) continue;
    if (/[\r\n\0]/.test(simple(value))) {
      errors.push({
        pointer: `${pointerBase}/${binding.arg.replaceAll("~", "~0").replaceAll("/", "~1")}`,
        message: `is sent as the ${binding.name} header, which cannot contain a line break or NUL`,
      });
    }
  }
  return errors;
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
