import { request as httpRequest, type IncomingMessage } from "node:http";
import { type Duplex, Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import {
  INTERNAL_IDENTITY_HEADER,
  isSessionCookiePart,
  type Principal,
  REQUEST_ID_HEADER,
  SANDBOX_INGRESS_HEADER,
} from "@agentplane/contracts";

/** Parsing lives in contracts so a gateway can route ingress without depending on this package. */
export { parseIngressHost } from "@agentplane/contracts";

import { ProblemError, problemResponse } from "@agentplane/problem-details";
import {
  authorize,
  guardSocket,
  HOP_BY_HOP_HEADERS,
  type InternalKeys,
  rejectUpgrade,
  spliceUpgrade,
  verifyIdentity,
  webStreamOf,
} from "@agentplane/service-kit";
import { scopeAnswerHeader, scopeSandboxCookie } from "./ingress-cookies.ts";
import { ingressConnections } from "./services/command-slots.ts";
import type { SandboxDeps } from "./services/context.ts";
import type { SandboxRow } from "./services/mapping.ts";
import { touchActivity } from "./services/sandboxes.ts";

/** A `Cookie` header less the console's session cookie (either name); undefined when nothing is left. */
function withoutSessionCookie(cookie: string): string | undefined {
  const kept = cookie
    .split(";")
    .map((p) => p.trim())
    .filter((p) => p && !isSessionCookiePart(p));
  return kept.length > 0 ? kept.join("; ") : undefined;
}

/** Which sandbox port a request for an ingress host means. */
export interface IngressTarget {
  slug: string;
  /** Absent: the sandbox's first exposed port. */
  port?: number;
  /** The caller, when the request carried a bearer token the gateway authenticated. */
  principal?: Principal;
  /** The gateway's request id: every problem answered here names it, and the path, as others do. */
  requestId?: string;
}

const HOP_BY_HOP = new Set([
  ...HOP_BY_HOP_HEADERS,
  "host",
  "authorization",
  // Platform-internal: the caller's verified identity and the ingress target never reach the sandbox.
  INTERNAL_IDENTITY_HEADER,
  SANDBOX_INGRESS_HEADER,
]);

async function resolveTarget(deps: SandboxDeps, target: IngressTarget): Promise<{ row: SandboxRow; port: number }> {
  const row = await deps.db.selectFrom("sandboxes").selectAll().where("slug", "=", target.slug).executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Sandbox ${target.slug} was not found` });
  const exposed = target.port === undefined ? row.ports[0] : row.ports.find((p) => p.port === target.port);
  if (!exposed) throw new ProblemError("not-found", { detail: `Sandbox ${target.slug} exposes no such port` });
  if (exposed.visibility === "private") {
    if (!target.principal) {
      throw new ProblemError("unauthenticated", {
        detail: "This port is private: send a bearer token that can read the sandbox",
        headers: { "www-authenticate": "Bearer" },
      });
    }
    await authorize({ principal: target.principal }, deps.authorizer, "sandboxes:read", {
      projectId: row.project_id,
      sandboxId: row.id,
      // Not the project's id: to another organization the sandbox is not found, as a missing one.
      resource: `Sandbox ${target.slug}`,
    });
  }
  if (row.state !== "running") {
    throw new ProblemError("service-unavailable", { detail: `Sandbox ${target.slug} is ${row.state}` });
  }
  void touchActivity(deps, row.id).catch(() => {});
  return { row, port: exposed.port };
}

/** How long an exposed port may take to answer once the request is sent (SANDBOX_INGRESS_TIMEOUT_MS). */
const DEFAULT_INGRESS_TIMEOUT_MS = 60_000;

/** How many connections one sandbox's ports may have open through the ingress (SANDBOX_INGRESS_MAX_CONNECTIONS). */
const DEFAULT_INGRESS_MAX_CONNECTIONS = 256;

/**
 * A connection to a sandbox's port, counted while it is open: each holds a relay on the host (a
 * process, locally) for as long as its request waits or its WebSocket lives, and anyone may open
 * them to a public port. Past the sandbox's limit, a 503 until one ends (decision 0043).
 */
async function openPort(deps: SandboxDeps, row: SandboxRow, port: number): Promise<Duplex> {
  const limit = deps.config.ingressMaxConnections ?? DEFAULT_INGRESS_MAX_CONNECTIONS;
  const release = ingressConnections.take(
    deps,
    row.id,
    limit,
    () =>
      new ProblemError("service-unavailable", {
        detail: `Sandbox ${row.slug} has ${limit} connections open through the ingress, its limit; try again when one ends`,
        headers: { "retry-after": "1" },
      }),
  );
  try {
    const stream = await deps.driver.portForward(row.id, port);
    if (stream.destroyed) release();
    else stream.once("close", release);
    return stream;
  } catch (err) {
    release();
    throw err;
  }
}

/** HTTP to an exposed port: the request is relayed into the sandbox's network namespace. */
export async function ingressFetch(deps: SandboxDeps, request: Request, target: IngressTarget): Promise<Response> {
  const where = {
    instance: new URL(request.url).pathname,
    ...(target.requestId ? { requestId: target.requestId } : {}),
  };
  try {
    const { row, port } = await resolveTarget(deps, target);
    const stream = await openPort(deps, row, port);
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      if (!HOP_BY_HOP.has(key)) headers[key] = value;
    });
    const publicHost = request.headers.get("host") ?? url.host;
    headers.host = `127.0.0.1:${port}`;
    headers["x-forwarded-host"] = publicHost;
    // The sandbox runs anyone's code: the console's session (a credential) never reaches it.
    const cookie = headers.cookie && withoutSessionCookie(headers.cookie);
    if (cookie) headers.cookie = cookie;
    else delete headers.cookie;
    // The body streams through as it arrives (a public port takes bodies from anyone: read whole,
    // one upload could fill the service's memory); its Content-Length, when it has one, goes along.
    const body = request.body && request.method !== "GET" && request.method !== "HEAD" ? request.body : undefined;
    // A body not passed on (a GET's) has no length there either: the port would wait for it.
    if (!body) delete headers["content-length"];
    const timeoutMs = deps.config.ingressTimeoutMs ?? DEFAULT_INGRESS_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    return await new Promise<Response>((resolve, reject) => {
      const req = httpRequest(
        {
          method: request.method,
          path: `${url.pathname}${url.search}`,
          headers,
          // No `agent` option: with one (even `false`) Node ignores createConnection and dials TCP itself.
          createConnection: () => stream as never,
        },
        (res: IncomingMessage) => {
          clearTimeout(timer);
          const status = res.statusCode ?? 502;
          // A program on the port may send any three digits: one no HTTP answer can end with (a
          // 101 to a request that asked no upgrade, 600–999) is no answer to pass on, and cannot be
          // made into one (it would throw here, outside the promise, and the request never ends).
          if (status < 200 || status > 599) {
            res.destroy();
            stream.destroy();
            reject(
              new ProblemError("bad-gateway", {
                detail: `Port ${port} of the sandbox answered with status ${status}, which no HTTP answer can have`,
              }),
            );
            return;
          }
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v === undefined || HOP_BY_HOP.has(k)) continue;
            for (const value of Array.isArray(v) ? v : [v]) {
              // A cookie stays on the sandbox host that set it (never the shared ingress domain).
              const passed = k === "set-cookie" ? scopeSandboxCookie(value, publicHost) : value;
              if (passed !== undefined) out.append(k, passed);
            }
          }
          const nullBody = status === 204 || status === 304 || request.method === "HEAD";
          if (nullBody) res.resume();
          res.on("end", () => stream.destroy());
          resolve(new Response(nullBody ? null : webStreamOf(res), { status, headers: out }));
        },
      );
      // Bounded from the end of the request (an upload may take its time): no answer by then is a 504.
      req.once("finish", () => {
        timer = setTimeout(() => {
          timedOut = true;
          req.destroy();
        }, timeoutMs);
      });
      req.on("error", () => {
        clearTimeout(timer);
        reject(
          timedOut
            ? new ProblemError("gateway-timeout", {
                detail: `Port ${port} of the sandbox did not answer within ${timeoutMs / 1000} s`,
              })
            : new ProblemError("bad-gateway", { detail: `Nothing answered on port ${port} of the sandbox` }),
        );
      });
      if (!body) req.end();
      else {
        const source = Readable.fromWeb(body as WebReadableStream<Uint8Array>);
        // A client that goes away mid-body ends the request into the sandbox too.
        source.once("error", () => req.destroy());
        source.pipe(req);
      }
    });
  } catch (err) {
    if (err instanceof ProblemError) return problemResponse(err, where);
    deps.logger.error({ err }, "ingress failed");
    return problemResponse(new ProblemError("bad-gateway", { detail: "The sandbox did not answer" }), where);
  }
}

/** WebSocket (any upgrade) to an exposed port: the handshake and frames are piped through unparsed. */
export function ingressUpgrade(
  deps: SandboxDeps,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: IngressTarget,
): void {
  guardSocket(socket);
  void (async () => {
    const { row, port } = await resolveTarget(deps, target);
    const upstream = await openPort(deps, row, port);
    const timeoutMs = deps.config.ingressTimeoutMs ?? DEFAULT_INGRESS_TIMEOUT_MS;
    spliceUpgrade(upstream, req, socket, head, {
      host: `127.0.0.1:${port}`,
      drop: new Set(["authorization", INTERNAL_IDENTITY_HEADER, SANDBOX_INGRESS_HEADER]),
      answerHeader: scopeAnswerHeader(req.headers.host),
      answerWithin: {
        ms: timeoutMs,
        detail: `Port ${port} of the sandbox did not answer within ${timeoutMs / 1000} s`,
      },
    });
  })().catch((err) => {
    rejectUpgrade(
      socket,
      err instanceof ProblemError ? err : new ProblemError("bad-gateway", { detail: "The sandbox did not answer" }),
    );
  });
}

/** `<slug>` or `<slug>:<port>` from the ingress header of a forwarded request. */
function targetFromHeader(value: string): { slug: string; port?: number } {
  const m = /^([a-z][a-z0-9-]{0,49})(?::(\d{1,5}))?$/.exec(value.trim());
  if (!m) throw new ProblemError("bad-request", { detail: `Bad ${SANDBOX_INGRESS_HEADER} header` });
  return { slug: m[1] as string, ...(m[2] ? { port: Number(m[2]) } : {}) };
}

async function principalFromHeader(keys: InternalKeys, value: string | undefined): Promise<Principal | undefined> {
  if (!value) return undefined;
  try {
    return (await verifyIdentity(keys, value, "sandbox")).principal;
  } catch {
    throw new ProblemError("unauthenticated", { detail: "Invalid internal identity" });
  }
}

/**
 * Ingress forwarded over HTTP by a gateway in another process: the target comes from
 * SANDBOX_INGRESS_HEADER, the caller (if any) from the internal identity the gateway signed.
 */
export async function forwardedIngressFetch(
  deps: SandboxDeps,
  keys: InternalKeys,
  request: Request,
): Promise<Response> {
  const requestId = request.headers.get(REQUEST_ID_HEADER) ?? undefined;
  try {
    const target = targetFromHeader(request.headers.get(SANDBOX_INGRESS_HEADER) ?? "");
    const principal = await principalFromHeader(keys, request.headers.get(INTERNAL_IDENTITY_HEADER) ?? undefined);
    return await ingressFetch(deps, request, {
      ...target,
      ...(principal ? { principal } : {}),
      ...(requestId ? { requestId } : {}),
    });
  } catch (err) {
    if (err instanceof ProblemError) {
      return problemResponse(err, { instance: new URL(request.url).pathname, ...(requestId ? { requestId } : {}) });
    }
    throw err;
  }
}

/** The upgrade counterpart of forwardedIngressFetch. */
export function forwardedIngressUpgrade(
  deps: SandboxDeps,
  keys: InternalKeys,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  guardSocket(socket);
  const identity = req.headers[INTERNAL_IDENTITY_HEADER];
  void (async () => {
    const target = targetFromHeader(String(req.headers[SANDBOX_INGRESS_HEADER] ?? ""));
    const principal = await principalFromHeader(keys, typeof identity === "string" ? identity : undefined);
    ingressUpgrade(deps, req, socket, head, { ...target, ...(principal ? { principal } : {}) });
  })().catch((err) => {
    rejectUpgrade(
      socket,
      err instanceof ProblemError ? err : new ProblemError("bad-gateway", { detail: "Ingress failed" }),
    );
  });
}
