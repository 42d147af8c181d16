import {
  ALL_ROUTES,
  AUTHENTICATED_PAGES,
  type ContractRoute,
  type Permission,
  PUBLIC_PAGES,
  type RouteAccess,
  type ServiceName,
} from "@agentplane/contracts";
import { type FieldError, unsafeTextReason } from "@agentplane/problem-details";

export interface RouteEntry {
  method: string;
  template: string;
  operationId: string;
  service: ServiceName;
  access: RouteAccess;
  /** The permission a scoped token must name to reach an `authenticated` route, if any may. */
  tokenScope?: Permission;
  websocket: boolean;
  /** A page that reads the browser session itself: the cookie is forwarded to it. */
  sessionCookie?: boolean;
}

interface CompiledPath {
  template: string;
  regex: RegExp;
  paramNames: string[];
  /** Literal segments count: with several matches, the most literal template wins (`/teams/mine` over `/teams/{id}`). */
  literalSegments: number;
  byMethod: Map<string, RouteEntry>;
}

export type RouteMatch =
  | {
      kind: "route";
      entry: RouteEntry;
      /** Decoded; a parameter that is not valid text keeps a U+FFFD stand-in and is named in `invalid`. */
      params: Record<string, string>;
      /** Path parameters that cannot be decoded or hold text no service accepts (answer 400). */
      invalid?: FieldError[];
    }
  | { kind: "method-not-allowed"; allow: string[] }
  | { kind: "not-found" };

/**
 * A last segment named `{path}` is a tail parameter: it matches the rest of the path, slashes
 * included (proxy routes such as `/v1/llm/cloud-a/{region}/{path}`). Every other parameter is one
 * segment.
 */
const TAIL_PARAM = "path";

function compile(template: string): Omit<CompiledPath, "byMethod"> {
  const paramNames: string[] = [];
  let literalSegments = 0;
  const segments = template.split("/");
  const pattern = segments
    .map((segment, index) => {
      const param = /^\{([^}]+)\}$/.exec(segment);
      if (param) {
        paramNames.push(param[1]!);
        return param[1] === TAIL_PARAM && index === segments.length - 1 ? "(.+)" : "([^/]+)";
      }
      if (segment) literalSegments++;
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { template, regex: new RegExp(`^${pattern}/?$`), paramNames, literalSegments };
}

/** The gateway's route table, derived from the contracts: one source of truth for paths. */
export class RouteTable {
  private readonly paths: CompiledPath[] = [];
  /** Templates without parameters by their path (and with a trailing slash): found without a scan. */
  private readonly literal = new Map<string, CompiledPath>();
  /**
   * The templates a path can match, by the path's first two segments (`/v1/llm`): those that begin
   * with these two literal segments and those that do not begin with two literals, in scan order.
   */
  private readonly byPrefix = new Map<string, CompiledPath[]>();
  /** Templates that do not begin with two literal segments: the candidates of any other path. */
  private readonly unprefixed: CompiledPath[] = [];

  constructor(routes: readonly ContractRoute[] = ALL_ROUTES) {
    const byTemplate = new Map<string, CompiledPath>();
    const add = (entry: RouteEntry) => {
      let compiled = byTemplate.get(entry.template);
      if (!compiled) {
        compiled = { ...compile(entry.template), byMethod: new Map() };
        byTemplate.set(entry.template, compiled);
        this.paths.push(compiled);
      }
      compiled.byMethod.set(entry.method, entry);
    };
    for (const route of routes) {
      add({
        method: route.method.toUpperCase(),
        template: route.path,
        operationId: route.operationId,
        service: route["x-service"],
        access: route["x-permission"],
        ...(route["x-token-scope"] ? { tokenScope: route["x-token-scope"] } : {}),
        websocket: route["x-websocket"] === true,
      });
    }
    for (const page of PUBLIC_PAGES) {
      for (const method of page.methods) {
        add({
          method,
          template: page.path,
          operationId: `page:${page.path}`,
          service: page.service,
          access: "public",
          websocket: false,
          ...(page.sessionCookie ? { sessionCookie: true } : {}),
        });
      }
    }
    for (const page of AUTHENTICATED_PAGES) {
      for (const method of page.methods) {
        add({
          method,
          template: page.path,
          operationId: `page:${page.path}`,
          service: page.service,
          access: "authenticated",
          websocket: false,
        });
      }
    }
    this.paths.sort((a, b) => b.literalSegments - a.literalSegments);
    for (const path of this.paths) {
      const prefix = templatePrefix(path.template);
      if (prefix === undefined) {
        this.unprefixed.push(path);
        for (const list of this.byPrefix.values()) list.push(path);
      } else {
        let list = this.byPrefix.get(prefix);
        if (!list) {
          list = [...this.unprefixed];
          this.byPrefix.set(prefix, list);
        }
        list.push(path);
      }
      if (path.paramNames.length > 0) continue;
      this.literal.set(path.template, path);
      this.literal.set(`${path.template}/`, path);
    }
  }

  get entries(): RouteEntry[] {
    return this.paths.flatMap((p) => [...p.byMethod.values()]);
  }

  match(method: string, pathname: string): RouteMatch {
    // A path that is all literal segments outranks any template with a parameter (the scan below
    // tries templates with more literal segments first), so an exact hit with the method is final.
    const exact = this.literal.get(pathname)?.byMethod.get(method === "HEAD" ? "GET" : method);
    if (exact) return { kind: "route", entry: exact, params: {} };
    const allow = new Set<string>();
    for (const path of this.byPrefix.get(pathPrefix(pathname)) ?? this.unprefixed) {
      const m = path.regex.exec(pathname);
      if (!m) continue;
      const params: Record<string, string> = {};
      const invalid: FieldError[] = [];
      path.paramNames.forEach((name, i) => {
        const decoded = decodeComponent(m[i + 1]!);
        params[name] = decoded.value;
        if (decoded.error) invalid.push({ pointer: `/path/${name}`, message: decoded.error });
      });
      const wanted = method === "HEAD" ? "GET" : method;
      const entry = path.byMethod.get(wanted);
      if (entry)
        return invalid.length > 0 ? { kind: "route", entry, params, invalid } : { kind: "route", entry, params };
      for (const known of path.byMethod.keys()) allow.add(known);
    }
    if (allow.size > 0) return { kind: "method-not-allowed", allow: [...allow].sort() };
    return { kind: "not-found" };
  }
}

/** `/a/b` of a template that begins with two literal segments `/a/b/...`; otherwise undefined. */
function templatePrefix(template: string): string | undefined {
  const [empty, first, second] = template.split("/", 3);
  if (empty !== "" || !first || !second || first.startsWith("{") || second.startsWith("{")) return undefined;
  return `/${first}/${second}`;
}

/** `/a/b` of a path `/a/b/...` (or `/a/b`), as it was sent. */
function pathPrefix(pathname: string): string {
  const end = pathname.indexOf("/", pathname.indexOf("/", 1) + 1);
  return end < 0 ? pathname : pathname.slice(0, end);
}

/**
 * Percent-decodes one path segment or query component. Malformed escapes (`%E0%A4%A`), NUL and
 * lone surrogates give an error message and a value safe to log and audit (U+FFFD stands in).
 */
export function decodeComponent(raw: string): { value: string; error?: string } {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return { value: raw.replaceAll("\u0000", "\uFFFD").toWellFormed(), error: "is not valid percent-encoded UTF-8" };
  }
  const error = unsafeTextReason(value);
  return error ? { value: value.replaceAll("\u0000", "\uFFFD").toWellFormed(), error } : { value };
}

/** Query parameters that cannot be decoded or hold text no service accepts, as 400 field errors. */
export function invalidQuery(search: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const pair of search.replace(/^\?/, "").split("&")) {
    if (!pair) continue;
    const eq = pair.indexOf("=");
    const rawName = (eq < 0 ? pair : pair.slice(0, eq)).replaceAll("+", " ");
    const rawValue = eq < 0 ? "" : pair.slice(eq + 1).replaceAll("+", " ");
    const name = decodeComponent(rawName);
    const value = decodeComponent(rawValue);
    if (name.error) errors.push({ pointer: `/query/${name.value}`, message: `parameter name ${name.error}` });
    else if (value.error) errors.push({ pointer: `/query/${name.value}`, message: value.error });
  }
  return errors;
}
