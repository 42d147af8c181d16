import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import http2 from "node:http2";
import type { Duplex } from "node:stream";
import {
  CLUSTER_JWT_AUDIENCE,
  FORWARD_TO_TUNNEL_PATH,
  INTERNAL_IDENTITY_HEADER,
  TUNNEL_TOKEN_ID_PREFIX,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import {
  IdentitySigner,
  IdentityVerifier,
  rejectUpgrade,
  servicePrincipal,
  type UpgradeHandler,
} from "@agentplane/service-kit";
import { injectTraceparent } from "@agentplane/telemetry";
import { sql } from "kysely";
import { type WebSocket, WebSocketServer } from "ws";
import type { ConnectionsContext } from "../context.ts";
import { smallJson } from "./h2-body.ts";
import { disconnected } from "./h2-request.ts";

export { disconnected } from "./h2-request.ts";
export { isLongRunning, type TunnelRequest } from "./tunnel-request.ts";

import { CLUSTER_JWT_HEADER, CLUSTER_JWT_TTL_HEADER, CONTROL_PATHS, type RequestUse } from "./protocol.ts";
import { TunnelRequestSigner } from "./request-signer.ts";
import { sendDownTunnel, type Tunnel, type TunnelRequest } from "./tunnel-request.ts";
import { tunnelStream } from "./ws-stream.ts";

/**
 * The largest WebSocket message a relay may send. A message is one flush of the relay's HTTP/2
 * frames, whose data the platform's 64 KiB flow-control window bounds (measured: under 64 KiB);
 * `ws` would otherwise gather up to 100 MiB of one message before handing any of it on.
 */
const MAX_TUNNEL_MESSAGE_BYTES = 4 * 1024 * 1024;

/** How long requests already on a replaced tunnel (watches, followed logs) may go on. */
const RETIRE_GRACE_MS = 30_000;

const TUNNEL_USE_HEADER = "x-agentplane-tunnel-use";
const TUNNEL_PATH = /^\/v1\/clusters\/([^/]+)\/tunnel$/;

function unauthenticated(detail: string): ProblemError {
  return new ProblemError("unauthenticated", { detail });
}

/**
 * The relay tunnels this replica holds, the owner registry (columns of `clusters`, renewed with
 * every heartbeat) and the way requests reach a tunnel wherever it lives.
 */
export class TunnelHub {
  private readonly ctx: ConnectionsContext;
  private readonly tunnels = new Map<string, Tunnel>();
  /** Tunnels replaced by a newer one, finishing the requests they carry. */
  private readonly retired = new Set<Tunnel>();
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_TUNNEL_MESSAGE_BYTES,
  });
  private readonly verifier: IdentityVerifier;
  private readonly caller = servicePrincipal("connections");
  /** The identity forwarded requests carry, reused while it has more than half its life left. */
  private readonly identity: IdentitySigner;

  /** Extra headers of a pending upgrade's 101 answer (the first cluster JWT). */
  private readonly upgradeHeaders = new WeakMap<IncomingMessage, string[]>();

  constructor(ctx: ConnectionsContext) {
    this.ctx = ctx;
    this.verifier = new IdentityVerifier(ctx.keys, "connections");
    this.identity = new IdentitySigner(ctx.keys);
    this.wss.on("headers", (headers, req) => {
      const extra = this.upgradeHeaders.get(req);
      if (extra) headers.push(...extra);
      this.upgradeHeaders.delete(req);
    });
  }

  private clusterJwt(projectId: string, clusterId: string): Promise<string> {
    return this.ctx.signer.sign(
      projectId,
      { sub: clusterId, aud: CLUSTER_JWT_AUDIENCE },
      this.ctx.config.clusterJwtTtlSeconds,
    );
  }

  readonly handleUpgrade: UpgradeHandler = (req, socket, head) => {
    this.accept(req, socket, head).catch((err) => {
      const problem =
        err instanceof ProblemError ? err : new ProblemError("internal-error", { detail: "The tunnel could not open" });
      if (!(err instanceof ProblemError)) this.ctx.logger.error({ err }, "tunnel upgrade failed");
      rejectUpgrade(socket, problem);
    });
  };

  private async accept(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? "/", "http://connections");
    const m = TUNNEL_PATH.exec(url.pathname);
    if (!m) throw new ProblemError("not-found", { detail: `No WebSocket endpoint at ${url.pathname}` });
    let clusterId: string;
    try {
      clusterId = decodeURIComponent(m[1]!);
    } catch {
      throw new ProblemError("not-found", { detail: `No cluster ${m[1]}` });
    }
    const identity = req.headers[INTERNAL_IDENTITY_HEADER];
    if (typeof identity !== "string") throw unauthenticated("A tunnel needs the cluster's tunnel token");
    let principal: Awaited<ReturnType<IdentityVerifier["verify"]>>["principal"];
    try {
      principal = (await this.verifier.verify(identity)).principal;
    } catch {
      throw unauthenticated("Invalid internal identity");
    }
    if (principal.type !== "cluster" || !principal.id.startsWith(TUNNEL_TOKEN_ID_PREFIX)) {
      throw unauthenticated("A tunnel is opened with the cluster's tunnel token");
    }
    // Checked here and not only when the gateway resolved the token: a rotated token stops at once.
    const cluster = await this.ctx.db
      .selectFrom("clusters")
      .select(["id", "project_id"])
      .where("id", "=", clusterId)
      .where("tunnel_token_id", "=", principal.id)
      .executeTakeFirst();
    if (!cluster) throw unauthenticated("The tunnel token is not valid for this cluster");
    // The relay's credential for its own calls to `/v1` comes with the upgrade answer (the tunnel
    // token opens tunnels only); renewed over the tunnel before it expires.
    this.upgradeHeaders.set(req, [
      `${CLUSTER_JWT_HEADER}: ${await this.clusterJwt(cluster.project_id, cluster.id)}`,
      `${CLUSTER_JWT_TTL_HEADER}: ${this.ctx.config.clusterJwtTtlSeconds}`,
    ]);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.open(cluster.id, cluster.project_id, principal.id, ws).catch((err) => {
        this.ctx.logger.warn({ err: (err as Error).message, clusterId }, "tunnel setup failed");
      });
    });
  }

  private async open(clusterId: string, projectId: string, tokenId: string, ws: WebSocket): Promise<void> {
    const duplex = tunnelStream(ws);
    const session = http2.connect("http://relay.tunnel", {
      createConnection: () => duplex as never,
      // Streams are the platform's to open: a relay pushing its own would hold them, and what they
      // carry, for as long as the tunnel lasts (a PUSH_PROMISE now ends the session).
      settings: { enablePush: false },
    });
    const tunnel: Tunnel = {
      clusterId,
      projectId,
      tokenId,
      connectionId: randomUUID(),
      ws,
      session,
      signer: new TunnelRequestSigner({ signer: this.ctx.signer, projectId, clusterId }),
      closed: false,
      timers: [],
      inFlight: 0,
    };
    tunnel.signer.prime();
    const drop = () => void this.closeTunnel(tunnel);
    session.on("error", drop);
    session.on("close", drop);
    duplex.on("error", drop);
    ws.on("close", drop);

    const { heartbeatMs, replicaId, replicaUrl } = this.ctx.config;
    const now = new Date();
    const registered = await this.ctx.db
      .updateTable("clusters")
      .set({
        tunnel_replica: replicaId,
        tunnel_url: replicaUrl ?? null,
        tunnel_connection_id: tunnel.connectionId,
        tunnel_expires_at: new Date(now.getTime() + 3 * heartbeatMs),
        first_connected_at: sql<Date>`coalesce(first_connected_at, now())`,
        disconnected_at: null,
        last_heartbeat_at: now,
      })
      .where("id", "=", clusterId)
      .where("tunnel_token_id", "=", tokenId)
      .executeTakeFirst();
    if (Number(registered.numUpdatedRows) === 0) {
      await this.closeTunnel(tunnel);
      return;
    }
    const previous = this.tunnels.get(clusterId);
    this.tunnels.set(clusterId, tunnel);
    if (previous) this.retireTunnel(previous);
    tunnel.timers.push(setInterval(() => void this.heartbeat(tunnel), heartbeatMs));
    const renewMs = (this.ctx.config.clusterJwtTtlSeconds * 1000) / 2;
    tunnel.timers.push(setInterval(() => void this.deliverClusterJwt(tunnel).catch(() => {}), renewMs));
    await this.refreshStatus(tunnel);
  }

  private async heartbeat(tunnel: Tunnel): Promise<void> {
    if (tunnel.closed) return;
    const alive = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.ctx.config.heartbeatMs);
      try {
        tunnel.session.ping((err) => {
          clearTimeout(timer);
          resolve(!err);
        });
      } catch {
        clearTimeout(timer);
        resolve(false);
      }
    });
    if (!alive) return this.closeTunnel(tunnel);
    const now = new Date();
    const renewed = await this.ctx.db
      .updateTable("clusters")
      .set({ tunnel_expires_at: new Date(now.getTime() + 3 * this.ctx.config.heartbeatMs), last_heartbeat_at: now })
      .where("id", "=", tunnel.clusterId)
      .where("tunnel_connection_id", "=", tunnel.connectionId)
      .where("tunnel_token_id", "=", tunnel.tokenId)
      .executeTakeFirst()
      .catch(() => undefined);
    // Deleted, rotated, or taken over by a newer tunnel: this one is done.
    if (renewed && Number(renewed.numUpdatedRows) === 0) await this.closeTunnel(tunnel);
  }

  private async refreshStatus(tunnel: Tunnel): Promise<void> {
    const res = await this.requestLocal(tunnel, { method: "GET", path: CONTROL_PATHS.status, use: "control" });
    if (!res.ok) {
      await res.body?.cancel();
      return;
    }
    // Read no further than a status's worth: the relay could make it endless.
    const status = ((await smallJson(res, { timeoutMs: this.ctx.config.clusterProxyTimeoutMs })) ?? {}) as {
      relayVersion?: string;
      kubernetesVersion?: string;
      tunnelKey?: unknown;
    };
    // A relay naming its key-agreement key gets MAC'd requests from now on (0008); an older one
    // names none and keeps getting signed ones.
    if (status.tunnelKey !== undefined) {
      try {
        tunnel.signer.acceptRelayKey(status.tunnelKey);
      } catch (err) {
        this.ctx.logger.warn({ err: (err as Error).message, clusterId: tunnel.clusterId }, "relay key refused");
      }
    }
    await this.ctx.db
      .updateTable("clusters")
      .set({
        relay_version: typeof status.relayVersion === "string" ? status.relayVersion.slice(0, 100) : null,
        kubernetes_version:
          typeof status.kubernetesVersion === "string" ? status.kubernetesVersion.slice(0, 100) : null,
      })
      .where("id", "=", tunnel.clusterId)
      .execute();
  }

  /** A fresh cluster JWT for the relay's own calls to `/v1`, signed with the project's current key. */
  private async deliverClusterJwt(tunnel: Tunnel): Promise<void> {
    if (tunnel.closed) return;
    const ttl = this.ctx.config.clusterJwtTtlSeconds;
    const token = await this.clusterJwt(tunnel.projectId, tunnel.clusterId);
    const body = new TextEncoder().encode(JSON.stringify({ token, expiresIn: ttl }));
    const res = await this.requestLocal(tunnel, {
      method: "PUT",
      path: CONTROL_PATHS.clusterJwt,
      body,
      use: "control",
    });
    await res.body?.cancel();
  }

  /**
   * A tunnel replaced by a newer one of the same relay (a rotated token): new requests take the new
   * tunnel, those already on this one finish (its session takes no new streams and closes once they
   * have), and whatever still runs after a grace period (a watch) is cut then.
   */
  private retireTunnel(tunnel: Tunnel): void {
    if (tunnel.closed) return;
    this.retired.add(tunnel);
    const cut = setTimeout(() => void this.closeTunnel(tunnel), RETIRE_GRACE_MS);
    cut.unref();
    tunnel.timers.push(cut);
    tunnel.session.close();
  }

  private async closeTunnel(tunnel: Tunnel): Promise<void> {
    if (tunnel.closed) return;
    tunnel.closed = true;
    this.retired.delete(tunnel);
    for (const t of tunnel.timers) clearInterval(t);
    tunnel.session.destroy();
    tunnel.ws.terminate();
    if (this.tunnels.get(tunnel.clusterId) === tunnel) this.tunnels.delete(tunnel.clusterId);
    await this.ctx.db
      .updateTable("clusters")
      .set({
        tunnel_replica: null,
        tunnel_url: null,
        tunnel_connection_id: null,
        tunnel_expires_at: null,
        disconnected_at: new Date(),
      })
      .where("id", "=", tunnel.clusterId)
      .where("tunnel_connection_id", "=", tunnel.connectionId)
      .execute()
      .catch(() => {});
  }

  /** Down this replica's tunnel (or the one that replaced it while the request was being signed). */
  private requestLocal(tunnel: Tunnel, req: TunnelRequest): Promise<Response> {
    return sendDownTunnel(this.ctx, tunnel, req, (clusterId) => this.tunnels.get(clusterId));
  }

  /**
   * A request for a cluster's API server (or its relay, `use: control`): down the local tunnel, or
   * forwarded to the replica that holds it; 503 `cluster-disconnected` when no relay is connected.
   */
  async send(clusterId: string, req: TunnelRequest): Promise<Response> {
    const local = this.tunnels.get(clusterId);
    if (local && !local.closed) return this.requestLocal(local, req);
    const owner = await this.ctx.db
      .selectFrom("clusters")
      .select(["tunnel_replica", "tunnel_url", "tunnel_expires_at"])
      .where("id", "=", clusterId)
      .executeTakeFirst();
    const live = owner?.tunnel_expires_at && owner.tunnel_expires_at.getTime() > Date.now();
    if (!live || !owner?.tunnel_url || owner.tunnel_replica === this.ctx.config.replicaId)
      throw disconnected(clusterId);
    return this.forward(owner.tunnel_url, clusterId, req);
  }

  private async forward(baseUrl: string, clusterId: string, req: TunnelRequest): Promise<Response> {
    const headers = new Headers(req.headers);
    headers.set(INTERNAL_IDENTITY_HEADER, await this.identity.sign(this.caller, "connections"));
    headers.set(TUNNEL_USE_HEADER, req.use ?? "kube");
    headers.delete("content-length");
    // The replica holding the tunnel continues this request's trace, not its caller's.
    injectTraceparent(headers);
    const path = FORWARD_TO_TUNNEL_PATH.replace("{clusterId}", encodeURIComponent(clusterId));
    try {
      return await fetch(new URL(`${path}${req.path}`, baseUrl), {
        method: req.method,
        headers,
        ...(req.body?.length ? { body: req.body } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
        redirect: "manual",
      });
    } catch (err) {
      if (req.signal?.aborted) throw err;
      throw disconnected(clusterId);
    }
  }

  /** The owner's side of `forward`: only this replica's tunnel, never forwarded again. */
  sendLocal(clusterId: string, req: TunnelRequest): Promise<Response> {
    const local = this.tunnels.get(clusterId);
    if (!local || local.closed) return Promise.reject(disconnected(clusterId));
    return this.requestLocal(local, req);
  }

  static useOf(headers: Headers): RequestUse {
    return headers.get(TUNNEL_USE_HEADER) === "control" ? "control" : "kube";
  }

  /**
   * Hands a rotated token to the connected relay, which persists it and reconnects with it; the
   * tunnel opened with the old token is closed within 5 s whatever the relay does.
   */
  async deliverTunnelToken(clusterId: string, token: string, previousTokenId: string): Promise<boolean> {
    const local = this.tunnels.get(clusterId);
    if (local && local.tokenId === previousTokenId) {
      local.timers.push(setTimeout(() => void this.closeTunnel(local), 5000));
    }
    try {
      const body = new TextEncoder().encode(JSON.stringify({ token }));
      const res = await this.send(clusterId, { method: "PUT", path: CONTROL_PATHS.tunnelToken, body, use: "control" });
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
  }

  /** Closes the cluster's tunnel if this replica holds it (deleting a cluster). */
  async disconnect(clusterId: string): Promise<void> {
    const local = this.tunnels.get(clusterId);
    if (local) await this.closeTunnel(local);
  }

  async close(): Promise<void> {
    await Promise.all([...this.tunnels.values(), ...this.retired].map((t) => this.closeTunnel(t)));
    this.wss.close();
  }
}
