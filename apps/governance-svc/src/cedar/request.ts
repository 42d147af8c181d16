import { CEDAR_ENTITY_TYPES, type DecisionRequest, type Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type * as cedar from "@cedar-policy/cedar-wasm/nodejs";

type Ctx = Record<string, unknown>;

const PRINCIPAL_TYPES: Record<Principal["type"], string> = {
  user: "User",
  api_token: "ApiToken",
  sandbox: "SandboxToken",
  cluster: "Cluster",
  service: "Service",
};

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const long = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? Math.trunc(v) : 0);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

function portsOf(v: unknown): { port: number; visibility: string }[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((p): p is { port: number; visibility?: string } => typeof p === "object" && p !== null && "port" in p)
    .map((p) => ({ port: long(p.port), visibility: str(p.visibility) || "private" }));
}

/**
 * The context of the schema for an action: every attribute present (absent ones become "", 0,
 * false or an empty set), so policies never need `has` and a missing field cannot error a rule.
 */
export function cedarContext(action: string, context: Ctx): cedar.Context {
  if (action === "sandbox:exec") {
    let argv = strings(context.argv);
    if (argv.length === 0 && typeof context.command === "string") argv = context.command.trim().split(/\s+/);
    const program = (argv[0] ?? "").split("/").pop() ?? "";
    return {
      program,
      args: argv.slice(1),
      command: typeof context.command === "string" ? context.command : argv.join(" "),
      tty: context.tty === true,
    };
  }
  if (action === "sandbox:create" || action === "sandbox:update" || action === "sandbox:start") {
    const ports = portsOf(context.ports);
    const resources = (context.resources ?? {}) as { cpu?: unknown; memoryMb?: unknown };
    return {
      image: str(context.image),
      ports,
      publicPorts: ports.filter((p) => p.visibility === "public").map((p) => p.port),
      envNames: strings(context.envNames),
      cpuMillis: typeof resources.cpu === "number" ? Math.round(resources.cpu * 1000) : 0,
      memoryMb: long(resources.memoryMb),
    };
  }
  if (action === "sandbox:expose-port") return { port: long(context.port), visibility: str(context.visibility) };
  if (action === "sandbox:egress") {
    return {
      host: str(context.host).toLowerCase().replace(/\.$/, ""),
      port: long(context.port) || 443,
      platform: context.platform === true,
    };
  }
  if (action === "llm:invoke") {
    return {
      provider: str(context.provider),
      family: str(context.family),
      region: str(context.region),
      modelId: str(context.modelId),
    };
  }
  if (action.startsWith("cluster:")) {
    const keys = ["group", "version", "resource", "subresource", "namespace", "name", "path"];
    return Object.fromEntries(keys.map((k) => [k, str(context[k])]));
  }
  if (action === "aws:call") {
    const keys = ["service", "operation", "region", "bucket", "key"];
    return Object.fromEntries(keys.map((k) => [k, str(context[k])]));
  }
  if (action === "tool:call") return { connectorId: str(context.connectorId), tool: str(context.tool) };
  return {};
}

export interface CedarCall {
  principal: cedar.TypeAndId;
  action: cedar.TypeAndId;
  resource: cedar.TypeAndId;
  context: cedar.Context;
  entities: cedar.EntityJson[];
}

/** The Cedar request for a decision: principal, action, resource (its project and org as parents, labels as tags). */
export function cedarCall(request: DecisionRequest): CedarCall {
  const resourceType = request.resource.type;
  if (!(CEDAR_ENTITY_TYPES as readonly string[]).includes(resourceType)) {
    throw new ProblemError("validation-failed", {
      detail: `Unknown resource entity type ${resourceType}`,
      errors: [{ pointer: "/body/resource/type", message: `one of ${CEDAR_ENTITY_TYPES.join(", ")}` }],
    });
  }
  const principal = { type: PRINCIPAL_TYPES[request.principal.type], id: request.principal.id };
  const resource = { type: resourceType, id: request.resource.id };
  const org = { type: "Organization", id: request.resource.orgId };
  const project = request.resource.projectId ? { type: "Project", id: request.resource.projectId } : undefined;
  const byUid = new Map<string, cedar.EntityJson>();
  const add = (entity: cedar.EntityJson & { uid: cedar.TypeAndId }) => {
    const key = `${entity.uid.type}::${entity.uid.id}`;
    if (!byUid.has(key)) byUid.set(key, entity);
  };
  add({ uid: resource, attrs: {}, parents: project ? [project] : [org], tags: { ...(request.resource.labels ?? {}) } });
  if (project) add({ uid: project, attrs: {}, parents: [org] });
  add({ uid: org, attrs: {}, parents: [] });
  if (principal.type === "SandboxToken" && request.principal.projectId) {
    add({ uid: principal, attrs: {}, parents: [{ type: "Project", id: request.principal.projectId }] });
  }
  const entities = [...byUid.values()];
  return {
    principal,
    action: { type: "Action", id: request.action },
    resource,
    context: cedarContext(request.action, request.context ?? {}),
    entities,
  };
}
