import http2, { type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { KubeConfig } from "@kubernetes/client-node";
import { WebSocket } from "ws";
import { RELAY_VERSION } from "./config.ts";
import { KubeClient } from "./kube.ts";
import { RelayAgreement } from "./mac.ts";
import {
  CLUSTER_JWT_HEADER,
  CLUSTER_JWT_TTL_HEADER,
  CONTROL_PATHS,
  CONTROL_PREFIX,
  DELEGATION_HEADER,
  RELAY_FAILURE_HEADER,
  REQUEST_SIGNATURE_HEADER,
} from "./protocol.ts";
import type { TokenStore } from "./token-store.ts";
import { describeUpstreamFailure } from "./upstream-failure.ts";
import { RequestVerifier, VerificationError } from "./verifier.ts";
import { tunnelStream } from "./ws-stream.ts";

export interface RelayLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RelayOptions {
  /** The control plane's public base URL. */
  baseUrl: string;
  clusterId: string;
  store: TokenStore;
  kube: KubeConfig;
  logger: RelayLogger;
  heartbeatMs?: number;
  /** Reconnect backoff bounds (default 1 s → 30 s, jittered). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long a dial may take to be answered (connect, TLS, upgrade) before it is given up (default 30 s). */
  handshakeTimeoutMs?: number;
  /** How long the relay's own questions to the control plane may take before they are asked again (default 30 s). */
  requestTimeoutMs?: number;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;
/**
 * The largest WebSocket message the platform may send, as the platform bounds the relay's: one
 * flush of its HTTP/2 frames, whose data this relay's 64 KiB flow-control window bounds. `ws` would
 * otherwise gather up to 100 MiB of one message before handing any of it on.
 */
const MAX_TUNNEL_MESSAGE_BYTES = 4 * 1024 * 1024;
/** How long the status answer waits for the API server's version before it goes without one. */
const VERSION_TIMEOUT_MS = 5000;
/** An API server answer complete on arrival and at most this long is sent back whole. */
const WHOLE_ANSWER_BYTES = 64 * 1024;
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te"]);

/**
 * The relay: dials out to the control plane with a WebSocket, serves HTTP/2 over it, verifies each
 * request's platform signature against the project's JWKS and only then calls the API server.
 */
export class Relay {
  private readonly options: RelayOptions;
  private readonly kube: KubeClient;
  private readonly h2 = http2.createServer();
  /** Its key-agreement key for MAC'd requests (0008): in memory, one per process. */
  private readonly agreement = new RelayAgreement();
  private token = "";
  private projectId = "";
  private readonly verifier: Promise<RequestVerifier>;
  private setVerifier!: (verifier: RequestVerifier) => void;
  private resolving: Promise<void> | undefined;
  private ws: WebSocket | undefined;
  /**
   * Tunnels replaced by a newer one (a rotated token) and left open until the platform closes
   * them: it does once it has registered the new tunnel, so requests never meet a gap between the two.
   */
  private readonly draining = new Set<WebSocket>();
  private stopped = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The cluster JWT for the relay's own calls to `/v1` (renewed over the tunnel). */
  clusterJwt: { token: string; expiresAt: number } | undefined;
  /** How many tunnels have opened (tests and the log watch reconnects). */
  connections = 0;

  constructor(options: RelayOptions) {
    this.options = options;
    this.kube = new KubeClient(options.kube);
    this.verifier = new Promise((resolve) => {
      this.setVerifier = resolve;
    });
    this.h2.on("stream", (stream, headers) => {
      this.handle(stream, headers).catch((err) => {
        // Given up by the platform: nobody is left to answer.
        if (stream.destroyed && (err as Error)?.name === "AbortError") return;
        // Every tunnelled request is answered: the platform passes this problem to the caller.
        const detail = `The relay could not ask the Kubernetes API server: ${describeUpstreamFailure(err, this.kube.server.origin)}`;
        this.options.logger.error({ err: (err as Error).message, path: headers[":path"] }, "request failed");
        if (!stream.headersSent) return respondProblem(stream, 502, detail);
        if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      });
    });
    this.h2.on("sessionError", (err) => this.options.logger.warn({ err: err.message }, "tunnel session error"));
  }

  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  get currentToken(): string {
    return this.token;
  }

  /**
   * Reads the tunnel token and dials. The first tunnel's upgrade answer carries a cluster JWT, with
   * which the relay asks the control plane for its project (over TLS, never from the tunnel) before
   * it verifies any request.
   */
  async start(): Promise<void> {
    this.token = await this.options.store.read();
    this.connect();
  }

  /** The cluster's project, asked of the control plane with the cluster JWT: never taken from the tunnel. */
  private async resolveProject(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) return;
      try {
        const res = await fetch(
          new URL(`/v1/clusters/${encodeURIComponent(this.options.clusterId)}`, this.options.baseUrl),
          {
            headers: { authorization: `Bearer ${this.clusterJwt?.token ?? ""}` },
            // Until it is answered no request is verified: one lost on the way is asked again.
            signal: AbortSignal.timeout(this.options.requestTimeoutMs ?? 30_000),
          },
        );
        if (res.ok) {
          this.projectId = ((await res.json()) as { projectId: string }).projectId;
          this.setVerifier(
            new RequestVerifier({
              baseUrl: this.options.baseUrl,
              projectId: this.projectId,
              clusterId: this.options.clusterId,
              // The JWKS route is read with the relay's current cluster JWT.
              bearer: () => this.clusterJwt?.token ?? "",
              agreement: this.agreement,
            }),
          );
          return;
        }
        this.options.logger.warn({ status: res.status }, "the control plane did not name the cluster's project");
        await res.body?.cancel();
      } catch (err) {
        this.options.logger.warn({ err: (err as Error).message }, "control plane unreachable");
      }
      await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** Math.min(attempt, 6))));
    }
  }

  /** The cluster JWT of a tunnel's upgrade answer (or of a renewal over the tunnel). */
  private takeClusterJwt(token: string, expiresInSeconds: number): void {
    this.clusterJwt = { token, expiresAt: Date.now() + expiresInSeconds * 1000 };
    if (!this.resolving && !this.projectId) {
      this.resolving = this.resolveProject().finally(() => {
        this.resolving = undefined;
      });
    }
  }

  private backoff(): number {
    const min = this.options.minBackoffMs ?? 1000;
    const max = this.options.maxBackoffMs ?? 30_000;
    const ceiling = Math.min(max, min * 2 ** Math.min(this.attempt, 10));
    this.attempt++;
    // Full jitter above half the ceiling: replicas of many relays do not reconnect in step.
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }

  private tunnelUrl(): string {
    const url = new URL(`/v1/clusters/${encodeURIComponent(this.options.clusterId)}/tunnel`, this.options.baseUrl);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return url.toString();
  }

  private connect(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.tunnelUrl(), {
      headers: {
        authorization: `Bearer ${this.token}`,
        "user-agent": `agentplane-cluster-relay/${RELAY_VERSION}`,
      },
      perMessageDeflate: false,
      maxPayload: MAX_TUNNEL_MESSAGE_BYTES,
      // A control plane (or a proxy before it) that takes the connection and never answers the
      // upgrade would otherwise hold the relay there for good: no close, so no reconnect.
      handshakeTimeout: this.options.handshakeTimeoutMs ?? 30_000,
    });
    ws.on("error", (err) => this.options.logger.warn({ err: err.message }, "tunnel error"));
    ws.once("unexpected-response", (_req, res) => {
      this.options.logger.warn({ status: res.statusCode }, "tunnel refused");
      // The token may have been rotated while we were away: take what the store holds now.
      if (res.statusCode === 401) {
        this.options.store
          .read()
          .then((t) => {
            this.token = t;
          })
          .catch(() => {});
      }
      ws.terminate();
    });
    ws.once("upgrade", (res) => {
      const jwt = res.headers[CLUSTER_JWT_HEADER];
      if (typeof jwt === "string" && jwt) this.takeClusterJwt(jwt, Number(res.headers[CLUSTER_JWT_TTL_HEADER] ?? 0));
    });
    ws.once("open", () => {
      this.attempt = 0;
      this.connections++;
      const previous = this.ws;
      this.ws = ws;
      // Make before break: the platform keeps routing over the previous tunnel until it has
      // registered this one, then closes the previous itself (or within seconds of a rotation).
      // Closing it here would leave a moment with no tunnel at all, answered 503.
      if (previous) {
        this.draining.add(previous);
        previous.once("close", () => this.draining.delete(previous));
        const backstop = setTimeout(() => previous.close(), 30_000);
        backstop.unref();
        previous.once("close", () => clearTimeout(backstop));
      }
      const stream = tunnelStream(ws);
      // The WebSocket's end only ends the stream's reading side; HTTP/2 would keep the session (and
      // the Kubernetes requests of its streams, watches that may never write again) until its next
      // write failed. A tunnel that is gone ends its session, and with it every request, at once.
      ws.once("close", () => stream.destroy());
      this.h2.emit("connection", stream);
      this.startHeartbeat(ws);
      this.options.logger.info({ clusterId: this.options.clusterId }, "tunnel open");
    });
    ws.once("close", () => {
      if (this.ws === ws) {
        this.ws = undefined;
        this.scheduleReconnect();
      } else if (!this.ws) {
        this.scheduleReconnect();
      }
    });
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const delay = this.backoff();
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (!this.connected) this.connect();
    }, delay);
  }

  private startHeartbeat(ws: WebSocket): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    let alive = true;
    ws.on("pong", () => {
      alive = true;
    });
    this.heartbeat = setInterval(() => {
      if (ws !== this.ws) return;
      if (!alive) {
        this.options.logger.warn({}, "tunnel heartbeat lost");
        ws.terminate();
        return;
      }
      alive = false;
      ws.ping();
    }, this.options.heartbeatMs ?? 10_000);
  }

  /** The whole request body (its hash is signed). Not by async iteration: that destroys the stream at its end. */
  private readBody(stream: ServerHttp2Stream): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          stream.pause();
          reject(new VerificationError("body too large"));
          return;
        }
        chunks.push(chunk);
      });
      stream.once("end", () => resolve(Buffer.concat(chunks)));
      stream.once("error", reject);
    });
  }

  private async handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<void> {
    const method = String(headers[":method"] ?? "GET");
    const path = String(headers[":path"] ?? "/");
    let body: Uint8Array;
    try {
      body = await this.readBody(stream);
      const signature = headers[REQUEST_SIGNATURE_HEADER];
      const delegation = headers[DELEGATION_HEADER];
      const verifier = await this.verifier;
      await verifier.verify({
        token: typeof signature === "string" ? signature : undefined,
        delegation: typeof delegation === "string" ? delegation : undefined,
        method,
        path,
        body,
      });
    } catch (err) {
      if (!(err instanceof VerificationError)) throw err;
      this.options.logger.warn({ method, path, reason: err.message }, "request refused");
      // A failure of the relay's, which the platform answers as its own 502: the caller's token
      // was good, and a 401 would tell it otherwise.
      const detail = `The relay of cluster ${this.options.clusterId} refused the request: ${err.message}`;
      respondProblem(stream, 502, detail, "refused");
      return;
    }
    if (path.startsWith(CONTROL_PREFIX)) return this.control(stream, method, path, body);
    // The platform may give up first (its deadline, its caller gone): the request to the API
    // server goes with the stream, also while its answer has not begun.
    const gone = new AbortController();
    stream.once("close", () => gone.abort());
    const { response, abort } = await this.kube.request({ method, path, headers, body, signal: gone.signal });
    stream.once("close", abort);
    const out: Record<string, string | string[] | number> = { ":status": response.statusCode ?? 502 };
    for (const [key, value] of Object.entries(response.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(key)) out[key] = value;
    }
    if (stream.destroyed) return abort();
    // An answer the API server has already sent whole (a small one, most of them) goes back as
    // one DATA frame with its length; others (a watch, a followed log, a large list) stream.
    const bodiless = method === "HEAD" || response.statusCode === 204 || response.statusCode === 304;
    if (!bodiless && response.complete && response.readableLength <= WHOLE_ANSWER_BYTES) {
      const chunks: Buffer[] = [];
      for (let chunk = response.read() as Buffer | null; chunk !== null; chunk = response.read() as Buffer | null) {
        chunks.push(chunk);
      }
      const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (out["content-length"] === undefined) out["content-length"] = whole.length;
      stream.respond(out);
      stream.end(whole);
      return;
    }
    stream.respond(out);
    // An answer cut off upstream is cut off here too (a reset, not a body that never ends).
    response.once("error", () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    response.once("aborted", () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    response.pipe(stream);
  }

  private async control(stream: ServerHttp2Stream, method: string, path: string, body: Uint8Array): Promise<void> {
    const json = () => JSON.parse(Buffer.from(body).toString("utf8") || "{}") as Record<string, unknown>;
    if (method === "GET" && path === CONTROL_PATHS.status) {
      // Asked of the API server for no longer than the platform waits, nor than VERSION_TIMEOUT_MS:
      // a silent one leaves the version out, and the status (the tunnel's key) is still answered.
      const gone = new AbortController();
      stream.once("close", () => gone.abort());
      return respondJson(stream, 200, {
        relayVersion: RELAY_VERSION,
        kubernetesVersion: await this.kubernetesVersion(
          AbortSignal.any([gone.signal, AbortSignal.timeout(VERSION_TIMEOUT_MS)]),
        ),
        // The platform MACs its requests with the key agreed with this one (0008).
        tunnelKey: this.agreement.publicJwk,
      });
    }
    if (method === "PUT" && path === CONTROL_PATHS.clusterJwt) {
      const { token, expiresIn } = json();
      if (typeof token !== "string") return respondJson(stream, 400, { error: "token missing" });
      this.takeClusterJwt(token, Number(expiresIn ?? 0));
      stream.respond({ ":status": 204 });
      stream.end();
      return;
    }
    if (method === "PUT" && path === CONTROL_PATHS.tunnelToken) {
      const { token } = json();
      if (typeof token !== "string") return respondJson(stream, 400, { error: "token missing" });
      await this.options.store.write(token);
      this.token = token;
      stream.respond({ ":status": 204 });
      stream.end();
      this.options.logger.info({}, "tunnel token rotated; reconnecting with the new one");
      // A new tunnel with the new token; the old one closes once it is open (or by the platform within 5 s).
      setImmediate(() => this.connect());
      return;
    }
    respondJson(stream, 404, { error: "unknown control request" });
  }

  private async kubernetesVersion(signal: AbortSignal): Promise<string | undefined> {
    try {
      const { response } = await this.kube.request({
        method: "GET",
        path: "/version",
        headers: {},
        body: new Uint8Array(),
        signal,
      });
      const chunks: Buffer[] = [];
      for await (const c of response) chunks.push(c as Buffer);
      if ((response.statusCode ?? 500) >= 300) return undefined;
      return (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { gitVersion?: string }).gitVersion;
    } catch {
      return undefined;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.ws?.terminate();
    for (const ws of this.draining) ws.terminate();
    this.h2.close();
    this.kube.close();
  }
}

/** A problem the platform re-issues as its own (`RELAY_FAILURE_HEADER`): the API server unreachable, or a refusal. */
function respondProblem(
  stream: ServerHttp2Stream,
  status: number,
  detail: string,
  failure: "upstream" | "refused" = "upstream",
): void {
  if (stream.destroyed) return;
  const body = JSON.stringify({
    type: "https://agentplane.dev/problems/bad-gateway",
    title: "Bad Gateway",
    status,
    detail,
  });
  stream.respond({
    ":status": status,
    "content-type": "application/problem+json",
    "content-length": Buffer.byteLength(body),
    [RELAY_FAILURE_HEADER]: failure,
  });
  stream.end(body);
}

function respondJson(stream: ServerHttp2Stream, status: number, body: unknown): void {
  if (stream.destroyed) return;
  stream.respond({ ":status": status, "content-type": "application/json" });
  stream.end(JSON.stringify(body));
}
