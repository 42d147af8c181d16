import {
  INTERNAL_IDENTITY_HEADER,
  OAUTH_ERROR_HEADER,
  type Principal,
  REQUEST_ID_HEADER,
  RESOURCE_ORG_HEADER,
} from "@agentplane/contracts";
import { eventId } from "@agentplane/events";
import { ProblemError, problemResponse } from "@agentplane/problem-details";
import {
  type CallOutcome,
  type DecisionCache,
  HOP_BY_HOP_HEADERS,
  type IdentityVerifier,
  type Logger,
  NULL_BODY_STATUSES,
  type ServiceClient,
  UpstreamCall,
} from "@agentplane/service-kit";
import { injectTraceparent, nameRequestSpan, startChildSpan } from "@agentplane/telemetry";
import type { Dispatcher } from "undici";
import type { InferenceConfig } from "../config.ts";
import type { CallerResolver } from "./caller.ts";
import { decideLlmInvoke } from "./policy.ts";
import type { ProjectCredentials } from "./project-credentials.ts";
import { analyzeRequest, type EstimatePrice, estimateMicroUsd, unseenInputMicroUsd } from "./request.ts";
import { checkTierHeaders } from "./service-tier.ts";
import { signSigV4 } from "./sigv4.ts";
import type { SpendGate } from "./spend.ts";
import { parseLlmPath, resolveUpstream } from "./target.ts";
import { MAX_COUNTED_TOKENS, UsageMeter } from "./usage.ts";

export interface ProxyDeps {
  config: InferenceConfig;
  verifier: IdentityVerifier;
  callers: CallerResolver;
  /** The installation's providers with the project's own credentials over them. */
  credentials: ProjectCredentials;
  spend: SpendGate;
  /** Governance and the decision cache in front of it; absent: every call is allowed. */
  governance?: { client: ServiceClient; cache: DecisionCache } | undefined;
  /** Writes a `usage.recorded` event to the outbox (group-committed with concurrent calls' events). */
  recordUsage(event: Record<string, unknown>): Promise<unknown>;
  /** USD per million tokens of a model; unknown models are estimated at `fallbackPrice`. */
  price(model: string | undefined): EstimatePrice;
  /** The most output tokens a call to the model can produce: the estimate of a call naming no cap. */
  outputCap(model: string | undefined): number;
  dispatcher: Dispatcher;
  logger: Logger;
}

/** Content headers the caller's SDK sets that the provider's API reads; everything else stays here. */
const FORWARDED = new Set(["content-type", "accept", "anthropic-version", "anthropic-beta"]);
const FORWARDED_PREFIXES = ["x-amzn-bedrock-", "x-amz-target"];
/**
 * Upstream headers not passed on: hop-by-hop ones, cookies, the encoding (bodies go out as read),
 * and the headers the gateway takes from a service's answer for its own use (the organization an
 * audit record is filed under, an OAuth refusal): a provider's answer never sets those.
 */
const NOT_RETURNED = new Set([
  ...HOP_BY_HOP_HEADERS,
  "set-cookie",
  "content-encoding",
  RESOURCE_ORG_HEADER,
  OAUTH_ERROR_HEADER,
]);

/** Whether a header of an `x-am…` name is one of the Bedrock headers forwarded by prefix. */
function forwardedByPrefix(key: string): boolean {
  for (const prefix of FORWARDED_PREFIXES) if (key.startsWith(prefix)) return true;
  return false;
}

/**
 * The request body, at most `cap` bytes. One of declared length (already checked against the
 * cap) is read whole in one call; one of unknown length is counted as it streams.
 */
async function readCapped(request: Request, cap: number): Promise<Uint8Array | undefined> {
  if (request.headers.get("content-length") !== null) {
    // arrayBuffer, not bytes: the Node server's request reads it straight from the connection.
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > cap) throw tooLarge(cap);
    return bytes;
  }
  const body = request.body;
  if (!body) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > cap) throw tooLarge(cap);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

interface PathAndQuery {
  pathname: string;
  search: string;
}

/** The path and query of an absolute request URL, without parsing the whole URL. */
function splitUrl(url: string): PathAndQuery {
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart < 0) return { pathname: "/", search: "" };
  const q = url.indexOf("?", pathStart);
  const hash = url.indexOf("#", pathStart);
  const end = hash < 0 ? url.length : hash;
  return q < 0 || q > end
    ? { pathname: url.slice(pathStart, end), search: "" }
    : { pathname: url.slice(pathStart, q), search: q + 1 === end ? "" : url.slice(q, end) };
}

/**
 * A compressed body is refused: the proxy could not read its model and output cap to estimate the
 * call (it would be reserved as a few bytes), and the providers' model APIs take plain JSON.
 */
function checkContentEncoding(encoding: string | null): void {
  if (encoding === null) return;
  for (const coding of encoding.split(",")) {
    const name = coding.trim().toLowerCase();
    if (name !== "" && name !== "identity") {
      throw new ProblemError("unsupported-media-type", {
        detail: `Content-Encoding ${encoding.slice(0, 64)} is not accepted: send the body uncompressed`,
        headers: { "x-should-retry": "false" },
      });
    }
  }
}

/**
 * The problem for a call the provider never answered: 504 when it held the call past the bound
 * on its headers, else 502 naming the network error (refused, reset, unknown host), never more
 * of the error than its code.
 */
function unanswered(provider: string, host: string, err: unknown, timeoutMs: number): ProblemError {
  const code = String((err as { code?: unknown } | null)?.code ?? "");
  if (code === "UND_ERR_HEADERS_TIMEOUT") {
    return new ProblemError("gateway-timeout", {
      detail: `${provider} at ${host} did not answer within ${timeoutMs / 1000} s`,
    });
  }
  const why = /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : "";
  return new ProblemError("bad-gateway", { detail: `${provider} at ${host} could not be reached${why}` });
}

const tooLarge = (cap: number) =>
  new ProblemError("payload-too-large", { detail: `The body exceeds ${Math.round(cap / 1024 / 1024)} MiB` });

/**
 * The `/v1/llm/**` pass-through, served outside the Hono app so bodies are never parsed or
 * capped at the service default: decide, reserve, forward with the provider's auth, stream the
 * answer back as it arrives while reading its usage, then record the usage once (which settles
 * the reservation in the audit service) or release the reservation when nothing was produced.
 */
export interface LlmProxy {
  (request: Request): Promise<Response>;
  /** Resolves once every call that has ended so far has recorded its usage or released its hold. */
  settled(): Promise<void>;
}

export function createLlmProxy(deps: ProxyDeps): LlmProxy {
  const cap = deps.config.maxBodyBytes ?? 20 * 1024 * 1024;
  const headersTimeout = deps.config.headersTimeoutMs ?? 5 * 60_000;
  /** Calls that ended and are recording their usage (or releasing their hold), and who waits for none. */
  let finishing = 0;
  let waiting: (() => void)[] = [];
  const callFinished = () => {
    if (--finishing > 0) return;
    const wake = waiting;
    waiting = [];
    for (const resolve of wake) resolve();
  };

  const handle = async (request: Request): Promise<Response> => {
    const url = splitUrl(request.url);
    const requestId = request.headers.get(REQUEST_ID_HEADER) ?? crypto.randomUUID();
    // The organization that pays, once known: the gateway files the call's audit record there (a
    // caller bound to no organization, on a path that names no project, says nothing of it).
    const paying: { orgId?: string } = {};
    try {
      return await proxy(request, url, requestId, paying);
    } catch (err) {
      const problem =
        err instanceof ProblemError
          ? err
          : new ProblemError("internal-error", { detail: `Request ${requestId} failed inside the inference proxy` });
      if (!(err instanceof ProblemError)) deps.logger.error({ err, requestId }, "inference proxy error");
      const response = problemResponse(problem, { instance: url.pathname, requestId });
      response.headers.set(REQUEST_ID_HEADER, requestId);
      if (paying.orgId) response.headers.set(RESOURCE_ORG_HEADER, paying.orgId);
      return response;
    }
  };
  return Object.assign(handle, {
    settled: () => (finishing === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
  });

  async function proxy(
    request: Request,
    url: PathAndQuery,
    requestId: string,
    paying: { orgId?: string },
  ): Promise<Response> {
    const method = request.method.toUpperCase();
    // Model calls are POSTs; reads of what the provider stores under the shared key are not served.
    if (method !== "POST") {
      throw new ProblemError("method-not-allowed", {
        detail: `${method} is not a model call; model calls are POST`,
        headers: { allow: "POST" },
      });
    }
    const target = parseLlmPath(url.pathname);
    const principal = await authenticate(request);
    const length = Number(request.headers.get("content-length") ?? "0");
    if (length > cap) throw tooLarge(cap);
    checkContentEncoding(request.headers.get("content-encoding"));
    checkTierHeaders(request.headers);
    const scope = await deps.callers.resolve(principal, target.projectId, requestId);
    paying.orgId = scope.orgId;
    const providers = await deps.credentials.forProject(scope.projectId, requestId);
    const upstream = resolveUpstream(target, url.search, providers.settings);
    const raw = await readCapped(request, cap);
    const analyzed = analyzeRequest(upstream, target.tail, raw);
    await decideLlmInvoke(
      deps.governance,
      {
        principal,
        scope,
        provider: target.provider,
        family: target.family,
        region: target.region,
        modelId: analyzed.model,
      },
      requestId,
    );
    // A call that names no output cap can produce the model's most (asked only then).
    const maxTokens = analyzed.maxTokens ?? (analyzed.embeddings ? 0 : deps.outputCap(analyzed.model));
    const price = deps.price(analyzed.model);
    const estimate = estimateMicroUsd(analyzed, raw?.byteLength ?? 0, price, maxTokens);
    const route = `/llm/${target.provider}${target.family ? `/${target.family}` : ""}`;
    nameRequestSpan(method, `/v1${route}/{path}`);
    const hold = await deps.spend.begin(
      scope,
      estimate,
      requestId,
      {
        principalType: principal.type,
        principalId: principal.id,
        provider: target.provider,
        model: analyzed.model ?? "unknown",
        route,
      },
      unseenInputMicroUsd(analyzed, raw?.byteLength ?? 0, price),
    );
    // The client left while the call was read, decided and reserved: its signal fired before the
    // proxy listens to it, so a call forwarded now would run (and be paid for) with nobody to answer.
    if (request.signal.aborted) {
      await deps.spend.release(hold, requestId);
      throw new ProblemError("bad-request", {
        detail: "The client closed the connection before the call was forwarded",
      });
    }

    let headers: Record<string, string> = { "accept-encoding": "identity" };
    request.headers.forEach((value, key) => {
      if (FORWARDED.has(key) || (key.startsWith("x-am") && forwardedByPrefix(key))) headers[key] = value;
    });
    const body = analyzed.body;
    if (body) headers["content-length"] = String(body.byteLength);
    // The model call as a span of its own (it outlives the request span when the answer streams),
    // with the gen_ai attributes of the OpenTelemetry conventions: ids and counts, no content.
    const upstreamSpan = startChildSpan(`chat ${analyzed.model ?? "unknown"}`, {
      "gen_ai.operation.name": "chat",
      "gen_ai.system": target.provider,
      "gen_ai.request.model": analyzed.model ?? "unknown",
    });
    injectTraceparent(headers, upstreamSpan);
    if (upstream.auth.kind === "sigv4") headers = await signSigV4(upstream.auth, method, upstream.url, headers, body);
    else headers[upstream.auth.name] = upstream.auth.value;

    let meter: UsageMeter | undefined;
    let ok = false;
    /** The client left after the call went out and before the provider's headers came back. */
    let abandoned = false;
    let finished = false;
    let call: UpstreamCall | undefined;
    const onClientGone = () => call?.abort(new Error("client disconnected"));
    const finish = async (outcome: CallOutcome) => {
      if (finished) return;
      finished = true;
      request.signal.removeEventListener("abort", onClientGone);
      if (outcome === "failed") {
        deps.logger.warn(
          { requestId, host: upstream.url.host },
          `${target.provider}'s answer broke off; the client's was cut`,
        );
      }
      // Upstream errors are the provider's answer, not a model call: nothing to pay for. An answer
      // begun (2xx) and cut before any output is a call all the same: the model read the input.
      if (!abandoned && (!ok || !meter)) {
        upstreamSpan?.setAttribute("gen_ai.outcome", outcome);
        upstreamSpan?.end();
        await deps.spend.release(hold, requestId);
        return;
      }
      const usage = meter?.result() ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
      // Cut before the provider reported the input (OpenAI-style streams and Converse report it in
      // their last event), or answered whole without reporting any counts: the model read it all
      // the same, counted as the estimate counts it.
      const uncounted = outcome !== "complete" || !meter?.reported;
      if (uncounted && usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens === 0) {
        usage.inputTokens = Math.ceil((raw?.byteLength ?? 0) / 4);
      }
      // A JSON answer cut before its usage (or without any): the model wrote all of it before it
      // was sent, and the part that arrived is counted as the estimate counts bytes.
      if (uncounted && usage.outputTokens === 0) {
        usage.outputTokens = Math.min(MAX_COUNTED_TOKENS, Math.ceil((meter?.jsonAnswerBytes ?? 0) / 4));
      }
      upstreamSpan?.setAttributes({
        "gen_ai.response.model": meter?.model ?? analyzed.model ?? "unknown",
        "gen_ai.usage.input_tokens": usage.inputTokens,
        "gen_ai.usage.output_tokens": usage.outputTokens,
        "gen_ai.usage.cache_read_input_tokens": usage.cacheReadTokens,
        "gen_ai.usage.cache_creation_input_tokens": usage.cacheWriteTokens,
      });
      upstreamSpan?.end();
      // After audit has the reservation, so the event settles it rather than racing it.
      await hold.ended();
      try {
        await deps.recordUsage({
          id: eventId(),
          orgId: scope.orgId,
          projectId: scope.projectId,
          principalType: principal.type,
          principalId: principal.id,
          provider: target.provider,
          model: analyzed.model ?? meter?.model ?? "unknown",
          route,
          ...usage,
          requestId,
          reservationId: hold.reservationId,
          time: new Date().toISOString(),
        });
      } catch (err) {
        deps.logger.error(
          { requestId, reservationId: hold.reservationId, err: (err as Error).message },
          "usage not recorded",
        );
      }
    };

    call = new UpstreamCall(
      deps.dispatcher,
      {
        origin: upstream.origin,
        path: upstream.path,
        method: method as Dispatcher.HttpMethod,
        headers,
        body: body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : undefined,
        headersTimeout,
        bodyTimeout: 10 * 60_000,
      },
      {
        onStart: (status, answerHeaders) => {
          ok = status >= 200 && status < 300;
          meter = new UsageMeter(upstream.api, String(answerHeaders["content-type"] ?? ""), answerHeaders);
        },
        onChunk: (chunk) => meter?.push(chunk),
        // Reading the usage and settling wait until the answer's last bytes have been written.
        onEnd: (outcome) => {
          finishing++;
          setImmediate(() => void finish(outcome).finally(callFinished));
        },
      },
    );
    request.signal.addEventListener("abort", onClientGone, { once: true });
    try {
      await call.started;
    } catch (err) {
      request.signal.removeEventListener("abort", onClientGone);
      if (request.signal.aborted) {
        // The client left while the provider held the call: it was sent the input and may be
        // running it (a JSON answer is written whole before its headers), so the call is metered
        // as one cut before any output, not released: leaving just before the answer is no way
        // around the spending limits.
        abandoned = true;
        finishing++;
        void finish("aborted").finally(callFinished);
        throw new ProblemError("bad-gateway", {
          detail: `The client closed the connection before ${target.provider} answered`,
        });
      }
      await deps.spend.release(hold, requestId);
      deps.logger.warn({ requestId, host: upstream.url.host, err: (err as Error).message }, "upstream unreachable");
      throw unanswered(target.provider, upstream.url.host, err, headersTimeout);
    }

    // A plain record: served on its own, the answer's headers are never turned into a web Headers.
    const out: Record<string, string> = {};
    for (const key in call.headers) {
      const value = call.headers[key];
      if (value === undefined || NOT_RETURNED.has(key)) continue;
      out[key] = Array.isArray(value) ? value.join(", ") : value;
    }
    out[REQUEST_ID_HEADER] = requestId;
    out[RESOURCE_ORG_HEADER] = scope.orgId;
    // An answer that came whole with its headers goes out in one write (status, headers, body);
    // anything else streams on as it arrives.
    const complete = call.complete();
    if (NULL_BODY_STATUSES.has(call.status)) {
      // A web Response with these statuses must have a null body (whatever bytes the upstream sent).
      if (!complete) void call.stream().cancel();
      return new Response(null, { status: call.status, headers: out });
    }
    return new Response(complete ?? call.stream(), { status: call.status, headers: out });
  }

  async function authenticate(request: Request): Promise<Principal> {
    const token = request.headers.get(INTERNAL_IDENTITY_HEADER);
    if (!token) throw new ProblemError("unauthenticated", { detail: "Authentication is required" });
    try {
      return (await deps.verifier.verify(token)).principal;
    } catch {
      throw new ProblemError("unauthenticated", { detail: "Invalid internal identity" });
    }
  }
}
