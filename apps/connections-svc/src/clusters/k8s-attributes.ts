import type { GovernedAction } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";

/** Kubernetes request attributes, parsed the way the API server's RequestInfoFactory does. */
export interface KubeRequestAttributes {
  resourceRequest: boolean;
  verb: string;
  /** `cluster:<verb>` for the decision API. */
  action: GovernedAction;
  group: string;
  version?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path: string;
}

const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);
const EXEC_SUBRESOURCES = new Set(["exec", "attach", "portforward"]);
const VERB_ACTIONS: Record<string, GovernedAction> = {
  get: "cluster:get",
  list: "cluster:list",
  watch: "cluster:watch",
  create: "cluster:create",
  update: "cluster:update",
  patch: "cluster:patch",
  delete: "cluster:delete",
  deletecollection: "cluster:deletecollection",
  // Non-resource requests carry the lower-case method as their verb, as in Kubernetes RBAC.
  post: "cluster:create",
  put: "cluster:update",
};

/**
 * Refuses paths that could address something other than what they say: dot segments (plain or
 * percent-encoded), encoded slashes or backslashes, NUL, empty segments.
 */
export function assertSafeProxyPath(rawPath: string): void {
  const bad = (why: string) =>
    new ProblemError("bad-request", {
      detail: `The proxy path is not allowed: ${why}`,
      errors: [{ pointer: "/path/path", message: why }],
    });
  if (/%(2f|5c|00)/i.test(rawPath)) throw bad("encoded slash, backslash or NUL");
  if (rawPath.includes("\\") || rawPath.includes("\0")) throw bad("backslash or NUL");
  const segments = rawPath.replace(/^\//, "").split("/");
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    let decoded: string;
    try {
      decoded = decodeURIComponent(seg);
    } catch {
      throw bad("malformed percent-encoding");
    }
    if (decoded === "." || decoded === "..") throw bad("dot segment");
    if (seg === "" && i !== segments.length - 1) throw bad("empty segment");
  }
}

/** Parses `/api/...`, `/apis/...` or any other path (a non-resource request) with the method and query. */
export function parseKubeRequest(method: string, path: string, query: URLSearchParams): KubeRequestAttributes {
  const lower = method.toLowerCase();
  const nonResource = (): KubeRequestAttributes => ({
    resourceRequest: false,
    verb: lower,
    action: VERB_ACTIONS[lower] ?? "cluster:get",
    group: "",
    path,
  });
  let parts = path
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent);
  let group = "";
  if (parts[0] === "api" && parts.length >= 2) {
    parts = parts.slice(1);
  } else if (parts[0] === "apis" && parts.length >= 3) {
    group = parts[1]!;
    parts = parts.slice(2);
  } else {
    return nonResource();
  }
  const version = parts[0]!;
  parts = parts.slice(1);
  if (parts.length === 0) return nonResource();
  let verb = "";
  switch (lower) {
    case "post":
      verb = "create";
      break;
    case "get":
    case "head":
      verb = "get";
      break;
    case "put":
      verb = "update";
      break;
    case "patch":
      verb = "patch";
      break;
    case "delete":
      verb = "delete";
      break;
    default:
      verb = lower;
  }
  // The deprecated `/watch/` prefix.
  if (parts[0] === "watch") {
    verb = "watch";
    parts = parts.slice(1);
  }
  let namespace: string | undefined;
  if (parts[0] === "namespaces") {
    if (parts.length > 1) {
      namespace = parts[1];
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
    }
  }
  const resource = parts[0];
  const name = parts[1];
  const subresource = parts.length >= 3 ? parts[2] : undefined;
  if (!name) {
    if (verb === "get") verb = isWatch(query) ? "watch" : "list";
    else if (verb === "delete") verb = "deletecollection";
  } else if (verb === "get" && isWatch(query)) {
    verb = "watch";
  }
  const action: GovernedAction = runsCommands(resource, subresource, verb)
    ? "cluster:exec"
    : (VERB_ACTIONS[verb] ?? "cluster:get");
  return {
    resourceRequest: true,
    verb,
    action,
    group,
    version,
    ...(resource ? { resource } : {}),
    ...(subresource ? { subresource } : {}),
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
    path,
  };
}

/**
 * Requests that run commands in a workload, decided as `cluster:exec` whatever their verb: exec,
 * attach and port-forward; adding an ephemeral container (a patch, but its command runs in the
 * Pod); and a node's proxy, through which the kubelet's own API runs commands in any of its Pods.
 */
function runsCommands(resource: string | undefined, subresource: string | undefined, verb: string): boolean {
  if (resource === "pods" && subresource !== undefined) {
    if (EXEC_SUBRESOURCES.has(subresource)) return true;
    if (subresource === "ephemeralcontainers") return verb !== "get" && verb !== "list" && verb !== "watch";
  }
  return resource === "nodes" && subresource === "proxy";
}

/**
 * As the API server decodes `watch` (apimachinery's string-to-bool conversion): its first value,
 * unless `0` or `false` in any case, is a watch, an empty one included.
 */
function isWatch(query: URLSearchParams): boolean {
  const w = query.get("watch");
  return w !== null && w !== "0" && w.toLowerCase() !== "false";
}
