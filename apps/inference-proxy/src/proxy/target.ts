import { CLOUD_B_RESOURCE_PATTERN, type InferenceProvider } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { CloudACredential, ProviderSettings } from "../config.ts";

/** Which wire format the upstream speaks on this path: decides how usage is read. */
export type ApiKind = "anthropic" | "bedrock-invoke" | "converse" | "openai";

export interface LlmTarget {
  provider: InferenceProvider;
  family?: "family-1" | "family-2";
  region?: string;
  /** The rest of the path as the caller sent it (still percent-encoded). */
  tail: string;
  /** From `/v1/projects/{projectId}/llm/...`. */
  projectId?: string;
}

export type UpstreamAuth =
  | { kind: "sigv4"; credential: Extract<CloudACredential, { kind: "sigv4" }>; region: string }
  | { kind: "header"; name: string; value: string };

export interface Upstream {
  url: URL;
  /** `url`'s origin, and its path with the query: what the dispatcher is given. */
  origin: string;
  path: string;
  auth: UpstreamAuth;
  api: ApiKind;
  /** The model named by the path (Bedrock `model/{id}/...`, Azure `deployments/{name}/...`). */
  modelFromPath?: string;
  /** Bedrock `invoke-with-response-stream` / `converse-stream`. */
  streamingPath: boolean;
}

const LLM_PREFIX = /^\/v1(?:\/projects\/([^/]+))?\/llm\/(.*)$/;
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;
const FAMILIES = new Set(["family-1", "family-2"]);

/** True for `/v1/llm/**` and `/v1/projects/{id}/llm/**`: the pass-through, served outside Hono. */
export function isLlmPath(pathname: string): boolean {
  return LLM_PREFIX.test(pathname);
}

const badRequest = (detail: string) => new ProblemError("bad-request", { detail });

/** Most calls go to the same few model paths: their parsed targets and upstreams are reused. */
const CACHED_PATHS = 1000;
const targets = new Map<string, LlmTarget>();
const upstreams = new WeakMap<ProviderSettings, Map<string, Upstream>>();

/**
 * Splits the raw path into provider, family, region and the tail to forward. The tail is refused
 * when it could leave the provider's API: dot segments, encoded slashes or backslashes, empty
 * segments, or anything that parses as an absolute URL. The result is shared: read only.
 */
export function parseLlmPath(pathname: string): LlmTarget {
  let target = targets.get(pathname);
  if (!target) {
    target = parsePath(pathname);
    if (targets.size >= CACHED_PATHS) targets.clear();
    targets.set(pathname, target);
  }
  return target;
}

function parsePath(pathname: string): LlmTarget {
  const m = LLM_PREFIX.exec(pathname);
  if (!m) throw new ProblemError("not-found", { detail: `No route for ${pathname}` });
  let projectId: string | undefined;
  try {
    projectId = m[1] ? decodeURIComponent(m[1]) : undefined;
  } catch {
    throw badRequest("The project id is not valid percent-encoding");
  }
  const parts = (m[2] as string).split("/");
  const provider = parts.shift() ?? "";
  let family: string | undefined;
  let region: string | undefined;
  if (provider === "cloud-a") region = parts.shift();
  else if (provider === "cloud-b") family = parts.shift();
  else if (provider === "cloud-a-alt") {
    family = parts.shift();
    region = parts.shift();
  } else {
    throw new ProblemError("not-found", {
      detail: `Unknown provider "${provider}"; one of cloud-a, cloud-a-alt, cloud-b`,
    });
  }
  if (family !== undefined && !FAMILIES.has(family)) {
    throw new ProblemError("not-found", {
      detail: `Unknown model family "${family}" of ${provider}; family-1 or family-2`,
    });
  }
  if (region !== undefined && !REGION.test(region)) {
    throw new ProblemError("validation-failed", {
      detail: `"${region}" is not a region name`,
      errors: [{ pointer: "/path/region", message: "must be a region name such as us-east-1" }],
    });
  }
  const tail = parts.join("/");
  checkTail(tail);
  checkOperation(provider, family, tail);
  return {
    provider: provider as InferenceProvider,
    ...(family ? { family: family as "family-1" | "family-2" } : {}),
    ...(region ? { region } : {}),
    tail,
    ...(projectId ? { projectId } : {}),
  };
}

function checkTail(tail: string): void {
  if (!tail) throw badRequest("The path below the provider prefix is empty");
  if (/%(?:2f|5c|00)|\\/i.test(tail))
    throw badRequest("Encoded slashes, backslashes and NUL are not allowed in the path");
  for (const segment of tail.split("/")) {
    if (segment === "") throw badRequest("Empty path segments are not allowed");
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw badRequest("The path is not valid percent-encoding");
    }
    if (decoded === "." || decoded === "..") throw badRequest("Dot segments are not allowed in the path");
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(tail)) throw badRequest("An absolute URL is not allowed as the path");
}

/**
 * The model calls each route forwards, as paths below its prefix. The provider's key is shared by
 * every caller of the route, so its other APIs stay closed: stored files, batches, fine-tuning,
 * stored responses and asynchronous invocations would reach what other tenants left there, or run
 * model calls whose usage never comes back in the answer to be metered.
 */
const OPERATIONS: Record<string, { patterns: RegExp[]; names: string }> = {
  "cloud-a": {
    patterns: [/^model\/[^/]+\/(?:invoke|invoke-with-response-stream|converse|converse-stream)$/],
    names: "model/{id}/invoke, invoke-with-response-stream, converse, converse-stream",
  },
  "cloud-a-alt/family-1": { patterns: [/^anthropic\/v1\/messages$/], names: "anthropic/v1/messages" },
  "cloud-a-alt/family-2": {
    patterns: [/^v1\/(?:chat\/completions|embeddings)$/],
    names: "v1/chat/completions, v1/embeddings",
  },
  "cloud-b/family-1": {
    // The deployments' embeddings: the agent runtime's memory reaches them through this route.
    patterns: [/^anthropic\/v1\/messages$/, /^openai\/deployments\/[^/]+\/embeddings$/],
    names: "anthropic/v1/messages, openai/deployments/{name}/embeddings",
  },
  "cloud-b/family-2": {
    patterns: [
      /^openai\/v1\/(?:chat\/completions|embeddings)$/,
      /^openai\/deployments\/[^/]+\/(?:chat\/completions|embeddings)$/,
    ],
    names: "openai/v1/chat/completions, openai/v1/embeddings, openai/deployments/{name}/chat/completions, …/embeddings",
  },
};

function checkOperation(provider: string, family: string | undefined, tail: string): void {
  const route = family ? `${provider}/${family}` : provider;
  const allowed = OPERATIONS[route];
  if (allowed?.patterns.some((p) => p.test(tail))) return;
  throw new ProblemError("not-found", {
    detail: `"${tail.slice(0, 200)}" is not a model operation of ${route}; one of ${allowed?.names ?? "none"}`,
  });
}

const trimSlash = (s: string) => s.replace(/\/+$/, "");

/**
 * Where the call goes and which credential it needs; a missing credential is a 503 naming the
 * variable. The result is shared by the calls with the same settings, target and query: read only.
 */
export function resolveUpstream(target: LlmTarget, search: string, p: ProviderSettings): Upstream {
  let known = upstreams.get(p);
  if (!known) {
    known = new Map();
    upstreams.set(p, known);
  }
  const key = `${target.provider}/${target.family ?? ""}/${target.region ?? ""}/${target.tail}${search}`;
  let upstream = known.get(key);
  if (!upstream) {
    upstream = buildUpstream(target, search, p);
    if (known.size >= CACHED_PATHS) known.clear();
    known.set(key, upstream);
  }
  return upstream;
}

function buildUpstream(target: LlmTarget, search: string, p: ProviderSettings): Upstream {
  const { provider, family, tail } = target;
  let origin: string;
  let auth: UpstreamAuth;
  let api: ApiKind;
  let modelFromPath: string | undefined;
  let streamingPath = false;
  if (provider === "cloud-a") {
    const region = target.region as string;
    if (!p.cloudA)
      throw missing("cloud-a", "CLOUD_A_BEARER_TOKEN (or CLOUD_A_ACCESS_KEY_ID and CLOUD_A_SECRET_ACCESS_KEY)");
    origin = trimSlash(p.cloudAEndpointUrl ?? `https://bedrock-runtime.${region}.amazonaws.com`);
    auth =
      p.cloudA.kind === "bearer"
        ? { kind: "header", name: "authorization", value: `Bearer ${p.cloudA.token}` }
        : { kind: "sigv4", credential: p.cloudA, region };
    const m = /^model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/.exec(tail);
    if (m) {
      modelFromPath = decodeURIComponent(m[1] as string);
      api = m[2]?.startsWith("converse") ? "converse" : "bedrock-invoke";
      streamingPath = m[2] === "invoke-with-response-stream" || m[2] === "converse-stream";
    } else api = "bedrock-invoke";
  } else if (provider === "cloud-a-alt") {
    if (p.cloudA?.kind !== "bearer") throw missing("cloud-a-alt", "CLOUD_A_BEARER_TOKEN");
    origin = new URL(p.cloudAAltBaseUrl ?? `https://bedrock-mantle.${target.region}.api.aws`).origin;
    // The vendor's Anthropic API takes the key as x-api-key; its OpenAI-style API as a bearer key.
    auth =
      family === "family-1"
        ? { kind: "header", name: "x-api-key", value: p.cloudA.token }
        : { kind: "header", name: "authorization", value: `Bearer ${p.cloudA.token}` };
    api = family === "family-1" ? "anthropic" : "openai";
  } else {
    const base = family === "family-1" ? p.cloudBBaseUrl : (p.cloudBOpenAiBaseUrl ?? p.cloudBBaseUrl);
    if (!p.cloudBKey || !(base || p.cloudBResource)) {
      throw missing("cloud-b", "CLOUD_B_API_KEY and CLOUD_B_RESOURCE_NAME (or CLOUD_B_BASE_URL)");
    }
    origin = new URL(base ?? `https://${resourceHost(p.cloudBResource as string)}`).origin;
    auth =
      family === "family-1"
        ? { kind: "header", name: "x-api-key", value: p.cloudBKey }
        : { kind: "header", name: "api-key", value: p.cloudBKey };
    api = family === "family-1" ? "anthropic" : "openai";
    const d = /(?:^|\/)deployments\/([^/]+)\//.exec(tail);
    if (d) modelFromPath = decodeURIComponent(d[1] as string);
  }
  const url = new URL(`${origin}/${tail}${search}`);
  // Belt and braces after checkTail: the URL must still point at the provider's origin.
  if (url.origin !== new URL(origin).origin) throw badRequest("The path would leave the provider's host");
  return {
    url,
    origin: url.origin,
    path: url.pathname + url.search,
    auth,
    api,
    ...(modelFromPath ? { modelFromPath } : {}),
    streamingPath,
  };
}

/** The cloud-b resource's host, checked again here: credentials stored before the check may hold anything. */
function resourceHost(resource: string): string {
  if (!CLOUD_B_RESOURCE_PATTERN.test(resource)) {
    throw new ProblemError("service-unavailable", {
      detail: `The cloud-b resource name ${JSON.stringify(resource.slice(0, 64))} is not one DNS label (letters, digits and inner hyphens): correct CLOUD_B_RESOURCE_NAME or the project's cloud-b credential`,
      headers: { "x-should-retry": "false" },
    });
  }
  return `${resource}.services.ai.azure.com`;
}

function missing(provider: string, variables: string): ProblemError {
  return new ProblemError("service-unavailable", {
    detail: `No credential for ${provider}: set ${variables} in the control plane's environment and restart, or add a project credential of that kind`,
    // Not cleared by waiting: SDK clients that honour x-should-retry report it at once.
    headers: { "x-should-retry": "false" },
  });
}
