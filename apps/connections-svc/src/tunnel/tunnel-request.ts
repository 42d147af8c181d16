import type { ClientHttp2Session } from "node:http2";
import { ProblemError } from "@agentplane/problem-details";
import type { WebSocket } from "ws";
import type { ConnectionsContext } from "../context.ts";
import { smallJson } from "./h2-body.ts";
import { disconnected, requestOnSession, TunnelStreamRefused } from "./h2-request.ts";
import { RELAY_FAILURE_HEADER, type RequestUse, requestClaims } from "./protocol.ts";
import type { SignedRequest, TunnelRequestSigner } from "./request-signer.ts";

/** One request to send down a tunnel. The body is whole: its hash is part of the signed claims. */
export interface TunnelRequest {
  method: string;
  /** Path and query as the relay passes them to the Kubernetes API (`/api/v1/pods?watch=true`). */
  path: string;
  headers?: Headers;
  body?: Uint8Array | undefined;
  signal?: AbortSignal | undefined;
  use?: RequestUse;
}

/** A relay's tunnel this replica holds. */
export interface Tunnel {
  clusterId: string;
  projectId: string;
  tokenId: string;
  connectionId: string;
  ws: WebSocket;
  session: ClientHttp2Session;
  /** Signs its requests with a key tenancy certified for this tunnel. */
  signer: TunnelRequestSigner;
  closed: boolean;
  timers: NodeJS.Timeout[];
  /** Proxy requests (not control ones) whose streams are open, bounded by `clusterTunnelMaxRequests`. */
  inFlight: number;
}

/** A watch (`?watch=true`) or a followed log (`?follow=true`): answers that stream for as long as they last. */
export function isLongRunning(path: string): boolean {
  const q = path.indexOf("?");
  if (q === -1) return false;
  const query = new URLSearchParams(path.slice(q + 1));
  return ["watch", "follow"].some((name) => {
    const value = query.get(name);
    return value !== null && value !== "false" && value !== "0";
  });
}

/** A path whose first segment, decoded, is that of the relay's control paths (`CONTROL_PATHS`). */
function namesRelay(path: string): boolean {
  const first = path.split(/[?/]/, 2)[1] ?? "";
  try {
    return decodeURIComponent(first) === "agentplane";
  } catch {
    return false;
  }
}

/**
 * Sends a request down a tunnel this replica holds; the response body streams. The relay's own
 * answer that the API server could not be asked (or that it refused) becomes this platform's 502
 * problem. `current` names the cluster's tunnel now, for a request whose tunnel was replaced while
 * it was being signed.
 */
export async function sendDownTunnel(
  ctx: ConnectionsContext,
  tunnel: Tunnel,
  req: TunnelRequest,
  current: (clusterId: string) => Tunnel | undefined,
): Promise<Response> {
  if (req.use !== "control" && namesRelay(req.path)) {
    // The relay answers these itself and refuses them as Kubernetes requests (a 401 of its own).
    throw new ProblemError("not-found", {
      detail: `No Kubernetes API path ${req.path.split("?")[0]}: the /agentplane prefix is the relay's own`,
    });
  }
  const release = takeSlot(ctx, tunnel, req);
  try {
    return await requestOnTunnel(ctx, tunnel, req, release, current);
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * A place for a proxy request among the tunnel's, released once its stream closes: whoever may
 * use a cluster could otherwise open watches on it without end, each holding a stream here, in
 * the relay and at the API server. Control requests (the relay's status, its credentials) are
 * never refused for that (docs/decisions/0030).
 */
function takeSlot(ctx: ConnectionsContext, tunnel: Tunnel, req: TunnelRequest): () => void {
  if (req.use === "control") return () => {};
  const max = ctx.config.clusterTunnelMaxRequests;
  if (tunnel.inFlight >= max) {
    throw new ProblemError("rate-limited", {
      detail: `Cluster ${tunnel.clusterId} has ${max} requests under way through its relay; try again once some have ended`,
      headers: { "retry-after": "1" },
    });
  }
  tunnel.inFlight++;
  let held = true;
  return () => {
    if (held) tunnel.inFlight--;
    held = false;
  };
}

async function requestOnTunnel(
  ctx: ConnectionsContext,
  tunnel: Tunnel,
  req: TunnelRequest,
  release: () => void,
  current: (clusterId: string) => Tunnel | undefined,
): Promise<Response> {
  const signed = await signRequest(tunnel, req);
  if (tunnel.closed || tunnel.session.closed) {
    // Replaced while this request was being signed: it goes down the tunnel that replaced it.
    release();
    const now = current(tunnel.clusterId);
    if (now && now !== tunnel && !now.closed) return sendDownTunnel(ctx, now, req, current);
    throw disconnected(tunnel.clusterId);
  }
  const res = await requestOnSession({
    session: tunnel.session,
    clusterId: tunnel.clusterId,
    signed,
    method: req.method,
    path: req.path,
    headers: req.headers,
    body: req.body,
    signal: req.signal,
    // Watches and followed logs are meant to last once answered (the API server answers their
    // head at once); everything else is bounded as Kubernetes bounds its non-long-running requests.
    ...(isLongRunning(req.path)
      ? { headTimeoutMs: ctx.config.clusterProxyTimeoutMs }
      : { timeoutMs: ctx.config.clusterProxyTimeoutMs }),
    onClose: release,
    onEarlyClose: (rstCode) =>
      ctx.logger.debug({ rstCode, clusterId: tunnel.clusterId }, "tunnel stream closed before its response"),
  }).catch((err: unknown) => {
    if (!(err instanceof TunnelStreamRefused)) throw err;
    // Not taken up by the relay: a tunnel being replaced refuses what reached it after the
    // platform's GOAWAY (which HTTP/2 sends ahead of streams still queued). It goes down the
    // tunnel that replaced this one, as one replaced while being signed does.
    release();
    const now = current(tunnel.clusterId);
    if (now && now !== tunnel && !now.closed && !now.session.closed) {
      ctx.logger.debug({ clusterId: tunnel.clusterId }, "tunnel stream refused; sent down the tunnel that replaced it");
      return sendDownTunnel(ctx, now, req, current);
    }
    throw err;
  });
  if (!res.headers.has(RELAY_FAILURE_HEADER)) return res;
  // Read no further than a problem's worth: the relay could make it endless.
  const failure = ((await smallJson(res, {
    limit: 16 * 1024,
    timeoutMs: ctx.config.clusterProxyTimeoutMs,
  }).catch(() => undefined)) ?? {}) as { detail?: unknown };
  throw new ProblemError("bad-gateway", {
    detail:
      typeof failure.detail === "string"
        ? failure.detail.slice(0, 1000)
        : `The relay of cluster ${tunnel.clusterId} could not ask its Kubernetes API server`,
  });
}

/** The platform-signed JWT of one request: cluster, method, path, body hash, `jti`, ≤ 60 s. */
function signRequest(tunnel: Tunnel, req: TunnelRequest): Promise<SignedRequest> {
  const claims = requestClaims({
    clusterId: tunnel.clusterId,
    method: req.method,
    path: req.path,
    body: req.body,
    use: req.use ?? "kube",
  });
  return tunnel.signer.sign(claims);
}
