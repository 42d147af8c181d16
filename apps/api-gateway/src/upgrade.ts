import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import {
  INTERNAL_IDENTITY_HEADER,
  REQUEST_ID_HEADER,
  SANDBOX_INGRESS_HEADER,
  type ServiceName,
  secureSessionCookie,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import {
  guardSocket,
  type IdentitySigner,
  type Logger,
  rejectUpgrade,
  spliceUpgrade,
  type UpgradeHandler,
} from "@agentplane/service-kit";
import { type RequestAuditor, shouldAudit } from "./audit.ts";
import { type Authenticator, bearerToken } from "./authn/authenticator.ts";
import { checkSessionOrigin, ownOrigins, sessionSecretOf, stripSessionCookie } from "./authn/session.ts";
import type { FailedAuthentications } from "./failed-authentications.ts";
import type { IngressRouter } from "./ingress-router.ts";
import { addressLimitKey, type GatewayLimits, limitPrincipal } from "./rate-limit.ts";
import { reachRefusal } from "./reach.ts";
import { invalidQuery, type RouteTable } from "./route-table.ts";

/** Where a WebSocket upgrade goes: a handler in this process, or a service's HTTP address. */
export type UpgradeTarget = { kind: "in-process"; handle: UpgradeHandler } | { kind: "http"; url: string };

const BEARER_PROTOCOL = "base64url.bearer.authorization.k8s.io.";

function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
  }
  return headers;
}

/**
 * Removes the caller's token from an upgrade, from the headers and the raw list the pipe writes
 * out: the Authorization header and the bearer subprotocol.
 */
function dropBearer(req: IncomingMessage): void {
  const protocols = req.headers["sec-websocket-protocol"];
  const kept =
    typeof protocols === "string"
      ? protocols
          .split(",")
          .map((p) => p.trim())
          .filter((p) => p && !p.startsWith(BEARER_PROTOCOL))
          .join(", ")
      : protocols;
  setUpgradeHeaders(req, { authorization: undefined, "sec-websocket-protocol": kept || undefined });
}

/** Rewrites the upgrade request's headers (and the raw list the TCP pipe writes out). */
export function setUpgradeHeaders(req: IncomingMessage, headers: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) delete req.headers[name];
    else req.headers[name] = value;
  }
  const raw: string[] = [];
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    for (const value of Array.isArray(v) ? v : [v]) raw.push(k, value);
  }
  req.rawHeaders.splice(0, req.rawHeaders.length, ...raw);
}

/** Raw pass-through of the upgrade to a service over TCP: the gateway never parses frames. */
export function pipeUpgrade(url: string, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  guardSocket(socket);
  if (socket.destroyed) return;
  const target = new URL(url);
  const upstream = connect(Number(target.port || 80), target.hostname, () =>
    spliceUpgrade(upstream, req, socket, head, { host: target.host }),
  );
  upstream.on("error", () => {
    upstream.destroy();
    socket.destroy();
  });
  // A client gone while the service connection opens takes that connection with it.
  const dropUpstream = () => {
    if (upstream.connecting) upstream.destroy();
  };
  socket.once("close", dropUpstream);
  upstream.once("connect", () => socket.off("close", dropUpstream));
}

/**
 * Calls `seen` with the status of the answer to an upgrade, read from the first bytes written to
 * the client's socket: whoever writes them (this gateway, a service in this process, or one piped
 * through), the socket is the one place every answer passes.
 */
function onAnswerStatus(socket: Duplex, seen: (status: number) => void): void {
  const { write, end } = socket;
  let looked = false;
  const look = (chunk: unknown) => {
    if (looked || chunk === undefined || typeof chunk === "function") return;
    looked = true;
    socket.write = write;
    socket.end = end;
    const start =
      typeof chunk === "string"
        ? chunk.slice(0, 16)
        : chunk instanceof Uint8Array
          ? Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(16, chunk.byteLength)).toString("latin1")
          : "";
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(start)?.[1];
    if (status) seen(Number(status));
  };
  socket.write = function (this: Duplex, chunk: unknown, ...rest: unknown[]) {
    look(chunk);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Duplex["write"];
  socket.end = function (this: Duplex, chunk?: unknown, ...rest: unknown[]) {
    look(chunk);
    return (end as (...args: unknown[]) => Duplex).call(this, chunk, ...rest);
  } as Duplex["end"];
}

export function createUpgradeHandler(deps: {
  routes: RouteTable;
  targets: Partial<Record<ServiceName, { upgrade?: UpgradeTarget }>>;
  authenticator: Authenticator;
  /** The gateway's signer: an identity is signed once per principal and service, not per upgrade. */
  signer: IdentitySigner;
  /** Refused credentials per address, counted and refused as on any route. */
  failedAuthentications: FailedAuthentications;
  /** The request rate limits (per token, per user): an upgrade is counted as one request. */
  limits: GatewayLimits;
  /** Where an upgrade came from (TRUSTED_PROXIES decides whether X-Forwarded-For counts). */
  clientAddress: (req: IncomingMessage) => string | undefined;
  logger?: Logger;
  ingress?: IngressRouter;
  publicUrl?: string;
  /** Refused upgrades (401, 403) are recorded as refused requests are. */
  auditor?: RequestAuditor;
}): UpgradeHandler {
  return (req, socket, head) => {
    guardSocket(socket);
    const requestId = randomUUID();
    const addressKey = addressLimitKey(deps.clientAddress(req));
    // Credentials are looked up only for an address that has not spent its budget of refusals,
    // and a refusal counts toward it, as on any route.
    const counted = <T>(lookup: () => Promise<T>): Promise<T> =>
      deps.failedAuthentications.guard(addressKey, lookup, (failure) => {
        deps.logger?.warn({ err: failure, requestId }, "failed authentication not counted");
      });
    void (async () => {
      const ingressTarget = deps.ingress?.parse(req.headers.host ?? "");
      if (ingressTarget && deps.ingress) {
        const token = bearerToken(toHeaders(req), { websocket: true });
        const principal = token ? await counted(() => deps.authenticator.authenticate(token)) : undefined;
        // The sandbox runs code of anyone's: the caller's token, in either place, and the console's
        // session cookie stay here.
        stripSessionCookie(req.headers);
        dropBearer(req);
        deps.ingress.upgrade(req, socket, head, { ...ingressTarget, ...(principal ? { principal } : {}) });
        return;
      }
      const url = new URL(req.url ?? "/", "http://gateway");
      const match = deps.routes.match("GET", url.pathname);
      if (match.kind !== "route" || !match.entry.websocket) {
        throw new ProblemError("not-found", { detail: `No WebSocket endpoint at ${url.pathname}` });
      }
      let principal: Awaited<ReturnType<Authenticator["authenticate"]>> | undefined;
      const { auditor } = deps;
      if (auditor) {
        onAnswerStatus(socket, (status) => {
          if (!shouldAudit("GET", status)) return;
          auditor.record({
            principal,
            operationId: match.entry.operationId,
            params: match.params,
            status,
            requestId,
            ip: deps.clientAddress(req),
            userAgent: req.headers["user-agent"],
            method: "GET",
            path: url.pathname,
          });
        });
      }
      const target = deps.targets[match.entry.service]?.upgrade;
      if (!target) throw new ProblemError("service-unavailable", { detail: `${match.entry.service} is not available` });
      const headers = toHeaders(req);
      const bearer = bearerToken(headers, { websocket: true });
      const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
      const secure = secureSessionCookie(encrypted ? "https" : "http", deps.publicUrl);
      const sessionSecret = bearer ? undefined : sessionSecretOf(headers, secure);
      if (sessionSecret) {
        // A browser's WebSocket carries the session cookie and always its Origin: the page must be
        // the console's own (cross-site WebSocket hijacking is refused here).
        const origins = ownOrigins(`http://${req.headers.host ?? "gateway"}`, deps.publicUrl);
        origins.add(`https://${req.headers.host ?? "gateway"}`);
        checkSessionOrigin(headers, "WEBSOCKET", origins);
        principal = (await counted(() => deps.authenticator.authenticateSession(sessionSecret))).principal;
      } else if (bearer) {
        const tunnel = match.entry.operationId === "openClusterTunnel";
        principal = await counted(() => deps.authenticator.authenticate(bearer, { tunnel }));
      } else {
        principal = await deps.authenticator.authenticate("");
      }
      // A relay's identity and a scoped token reach what they reach on plain requests, no more.
      const unreachable = reachRefusal(principal, match.entry, match.params);
      if (unreachable) throw unreachable;
      // Text no service can store, refused here as on a plain request (after the 401 of a caller
      // without a valid token), naming the field.
      const invalid = [...(match.invalid ?? []), ...(url.search ? invalidQuery(url.search) : [])];
      if (invalid.length > 0) {
        throw new ProblemError("validation-failed", { detail: "The request is not valid", errors: invalid });
      }
      // Counted like any request of the principal (a connection held open is still one request),
      // and refused with the same 429 and RateLimit headers.
      const { refused } = await limitPrincipal(deps.limits, principal);
      if (refused) throw refused;
      stripSessionCookie(req.headers);
      const identity = await deps.signer.sign(principal, match.entry.service);
      // The service sees the identity, never the caller's credential.
      dropBearer(req);
      setUpgradeHeaders(req, {
        [INTERNAL_IDENTITY_HEADER]: identity,
        [REQUEST_ID_HEADER]: requestId,
        [SANDBOX_INGRESS_HEADER]: undefined,
      });
      if (target.kind === "in-process") target.handle(req, socket, head);
      else pipeUpgrade(target.url, req, socket, head);
    })().catch((err) => {
      const problem =
        err instanceof ProblemError ? err : new ProblemError("internal-error", { detail: "Upgrade failed" });
      if (!(err instanceof ProblemError)) deps.logger?.error({ err, requestId }, "upgrade failed");
      rejectUpgrade(socket, problem, requestId);
    });
  };
}
