// Request spans across the control plane: a server span per request, W3C `traceparent` carried to
// the next process (and `traceresponse` back), and the current span for log lines. The current
// span lives in an AsyncLocalStorage of this package, not in OpenTelemetry's global context, so
// nothing here depends on (or changes) global state other libraries may use.
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { NOOP_SPAN, type Telemetry } from "./otel.ts";

const propagator = new W3CTraceContextPropagator();
/** Reads `traceparent`/`tracestate` straight from a request's headers (no copy of all of them). */
const headersGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};
const HEALTH = /^\/health(\/|$)/;

interface Active {
  span: Span;
  telemetry: Telemetry;
  /** The span has been named after its route (a request span not yet named is the caller's to name). */
  named: boolean;
}
const active = new AsyncLocalStorage<Active>();

/** The span of the request this code runs for, if it is traced. */
export function currentSpan(): Span | undefined {
  return active.getStore()?.span;
}

/** `trace_id`/`span_id` of the current span, for log lines (empty when not traced). */
export function traceFields(): Record<string, string> {
  const span = active.getStore()?.span;
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

function name(span: Span, method: string, route: string): void {
  span.updateName(`${method} ${route}`);
  span.setAttribute("http.route", route);
}

/**
 * Names the current request span after its route template (`GET /v1/projects/{projectId}`), never
 * the raw path, which carries ids and query values.
 */
export function nameRequestSpan(method: string, route: string): void {
  const store = active.getStore();
  if (!store || store.named) return;
  store.named = true;
  name(store.span, method, route);
}

/**
 * Runs a service's handling of one request in its own span: the request span itself when this
 * process's server started it for this request, else (a service called in process by another) a
 * child span. `fn` names it once the route is known.
 */
export async function inServiceSpan(
  method: string,
  fn: (nameRoute: (route: string) => void) => Promise<void>,
): Promise<void> {
  const store = active.getStore();
  if (!store) return fn(() => {});
  if (!store.named) {
    store.named = true;
    return fn((route) => name(store.span, method, route));
  }
  const span = store.telemetry.tracer.startSpan(
    method,
    { kind: SpanKind.SERVER },
    trace.setSpan(ROOT_CONTEXT, store.span),
  );
  try {
    await active.run({ span, telemetry: store.telemetry, named: true }, () => fn((route) => name(span, method, route)));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/** Adds attributes to the current span: ids, enums, counts only. */
export function annotateSpan(attributes: Attributes): void {
  active.getStore()?.span.setAttributes(attributes);
}

/**
 * Starts a child of the current request span that the caller ends (an upstream call whose answer
 * outlives the request span, such as a streamed model answer). Undefined when not traced.
 */
export function startChildSpan(
  spanName: string,
  attributes: Attributes,
  kind: SpanKind = SpanKind.CLIENT,
): Span | undefined {
  const store = active.getStore();
  if (!store) return undefined;
  return store.telemetry.tracer.startSpan(spanName, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, store.span));
}

/** Writes `span` (by default the current one) as `traceparent` into outgoing headers. */
export function injectTraceparent(headers: Headers | Record<string, string>, span = active.getStore()?.span): void {
  if (!span) return;
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  if (!carrier.traceparent) return;
  if (headers instanceof Headers) headers.set("traceparent", carrier.traceparent);
  else headers.traceparent = carrier.traceparent;
}

type Fetch = (request: Request, ...rest: never[]) => Response | Promise<Response>;

/**
 * Serves `fetch` with a server span per request: the parent is the request's `traceparent` (the
 * calling process), else the span this runs inside (an in-process call), else a new trace. The
 * span is named by the method until the route is known (`nameRequestSpan`). Answers carry
 * `traceresponse`. Without telemetry, `fetch` itself is returned: nothing is added.
 */
export function traceRequests<F extends Fetch>(telemetry: Telemetry, fetch: F, attributes: Attributes = {}): F {
  if (!telemetry.enabled) return fetch;
  const traced = async (request: Request, ...rest: never[]) => {
    // Probes are not requests anyone follows: no span for every readiness check.
    if (request.url.includes("/health") && HEALTH.test(new URL(request.url).pathname)) return fetch(request, ...rest);
    const incoming = propagator.extract(ROOT_CONTEXT, request.headers, headersGetter);
    const outer = active.getStore()?.span;
    const parent = trace.getSpan(incoming) ? incoming : outer ? trace.setSpan(ROOT_CONTEXT, outer) : ROOT_CONTEXT;
    const span = telemetry.tracer.startSpan(
      request.method,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": request.method, ...attributes } },
      parent,
    );
    try {
      const response = await active.run({ span, telemetry, named: false }, () => fetch(request, ...rest));
      span.setAttribute("http.response.status_code", response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      const { traceId, spanId } = span.spanContext();
      try {
        response.headers.set("traceresponse", `00-${traceId}-${spanId}-01`);
      } catch {
        // Immutable headers (a fetched response passed through): the trace still connects.
      }
      return response;
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute("error.type", (err as Error).name ?? "Error");
      throw err;
    } finally {
      span.end();
    }
  };
  return traced as unknown as F;
}

/**
 * Runs `fn` as a child span of the current request (a database statement, a decision, an
 * upstream call). Without a current span, `fn` runs as it is.
 */
export async function withChildSpan<T>(
  telemetry: Telemetry,
  spanName: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  const parent = active.getStore();
  if (!telemetry.enabled || !parent) return fn(NOOP_SPAN);
  const span = telemetry.tracer.startSpan(spanName, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent.span));
  try {
    return await active.run({ span, telemetry, named: true }, () => fn(span));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Runs `fn` as a child span of the current span, whatever telemetry traces it (a governance
 * decision, a spend reservation); what `fn` calls is inside the child. Attributes: ids, enums,
 * counts. Without a current span, `fn` runs as it is, with a span that records nothing.
 */
export async function inChildSpan<T>(
  spanName: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  const parent = active.getStore();
  if (!parent) return fn(NOOP_SPAN);
  return withChildSpan(parent.telemetry, spanName, attributes, fn, kind);
}

export { SpanKind };
