import {
  ALL_ROUTES,
  type ContractRoute,
  PUBLIC_PAGES,
  type RouteAccess,
  type ServiceName,
} from "@agentplane/contracts";

export interface RouteEntry {
  method: string;
  template: string;
  operationId: string;
  service: ServiceName;
  access: RouteAccess;
  websocket: boolean;
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
  | { kind: "route"; entry: RouteEntry; params: Record<string, string> }
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
        });
      }
    }
    this.paths.sort((a, b) => b.literalSegments - a.literalSegments);
  }

  get entries(): RouteEntry[] {
    return this.paths.flatMap((p) => [...p.byMethod.values()]);
  }

  match(method: string, pathname: string): RouteMatch {
    const allow = new Set<string>();
    for (const path of this.paths) {
      const m = path.regex.exec(pathname);
      if (!m) continue;
      const params: Record<string, string> = {};
      path.paramNames.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1]!);
      });
      const wanted = method === "HEAD" ? "GET" : method;
      const entry = path.byMethod.get(wanted);
      if (entry) return { kind: "route", entry, params };
      for (const known of path.byMethod.keys()) allow.add(known);
    }
    if (allow.size > 0) return { kind: "method-not-allowed", allow: [...allow].sort() };
    return { kind: "not-found" };
  }
}
