import { lookup } from "node:dns/promises";
import { mkdtempSync, rmSync } from "node:fs";
import {
  type ClientRequest,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { ProblemError } from "@agentplane/problem-details";
import type { Logger } from "@agentplane/service-kit";
import { AddressPolicy } from "@agentplane/service-kit/outbound";
import { forwardedHeaders, refuseRequest, refuseTunnel } from "./answers.ts";
import {
  AttemptBucket,
  DEFAULT_EGRESS_ATTEMPT_BURST,
  DEFAULT_EGRESS_ATTEMPT_RATE,
  DEFAULT_EGRESS_IDLE_TIMEOUT_MS,
  endBoth,
} from "./bounds.ts";
import type { PlatformDestination } from "./platform.ts";

/** The answer for one destination: allowed, or refused with the rule that refused it. */
export interface EgressVerdict {
  allowed: boolean;
  /** The policy rule that denied (absent when no policy permits egress at all). */
  ruleId?: string;
  detail?: string;
  /** The bound policy versions the destination was decided under (governance records them per sandbox for drift). */
  policies?: { bindingId: string; policyId: string; version: number }[];
}

/**
 * Decides one destination of one sandbox; throws a ProblemError (503) when it cannot decide.
 * `platform` is true when the destination is the platform's own API.
 */
export type EgressDecider = (
  sandboxId: string,
  host: string,
  port: number,
  platform: boolean,
) => Promise<EgressVerdict>;

export interface EgressProxyOptions {
  decide: EgressDecider;
  /**
   * Test-only name map (`SANDBOX_EGRESS_HOST_MAP`): `name` or `name:port` → `address[:port]`.
   * Policies still see the name the sandbox asked for; mapped names may point at private addresses.
   */
  hostMap?: Record<string, string>;
  /** The platform's own API: reachable from sandboxes (decided as `platform`), dialed where configured. */
  platform?: Pick<PlatformDestination, "host" | "port" | "dial">;
  /**
   * Records a refusal the proxy makes after the policy allowed (a destination on a private address),
   * as the decider records its own; a failure to record is logged, and the refusal stands.
   */
  refused?: (sandboxId: string, host: string, port: number, reason: string) => Promise<void>;
  /** Connections one sandbox may hold open through its proxy at once (default 256); past it, 429. */
  maxConnections?: number;
  /** A connection with no byte either way for this long is ended on both sides (default 5 min). */
  idleTimeoutMs?: number;
  /** New connection attempts (CONNECTs and plain requests) per sandbox per second (default 50); past it, 429. */
  attemptRate?: number;
  /** Attempts a sandbox may make at once before `attemptRate` applies (default 200). */
  attemptBurst?: number;
  logger: Logger;
}

/** The per-sandbox bounds an operator sets (`SANDBOX_EGRESS_IDLE_TIMEOUT_MS`, `…_ATTEMPTS_PER_SECOND`, `…_ATTEMPT_BURST`). */
export type EgressLimits = Pick<EgressProxyOptions, "idleTimeoutMs" | "attemptRate" | "attemptBurst">;

/** Concurrent connections per sandbox: a pids limit of 1024 otherwise lets one sandbox hold ~2000 of the service's descriptors. */
export const DEFAULT_MAX_EGRESS_CONNECTIONS = 256;
/** How long a connection over the limit may take to send the request it is refused. */
const OVER_LIMIT_GRACE_MS = 5000;

interface Destination {
  host: string;
  port: number;
}

/**
 * The platform's one outbound address policy with nothing allowed: only globally routable unicast
 * addresses; loopback, private, link-local (cloud metadata), CGNAT, reserved and every IPv6 form
 * that carries an IPv4 address are never reachable through the proxy by DNS.
 */
const PUBLIC_ONLY = new AddressPolicy();

export function isPrivateAddress(address: string): boolean {
  return !PUBLIC_ONLY.allowsAddress(address);
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/;

/** `host:port` of a CONNECT (`[v6]:port` too); undefined when malformed. */
export function parseAuthority(authority: string): Destination | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(authority);
  if (!m) return undefined;
  return normalize(m[1] ?? (m[2] as string), Number(m[3]));
}

function normalize(rawHost: string, port: number): Destination | undefined {
  const host = rawHost.toLowerCase().replace(/\.$/, "");
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  if (isIP(host) === 0 && !HOST_NAME.test(host)) return undefined;
  return { host, port };
}

function denied(dest: Destination, verdict: EgressVerdict): ProblemError {
  return new ProblemError("policy-denied", {
    detail:
      verdict.detail ??
      (verdict.ruleId
        ? `Egress to ${dest.host}:${dest.port} is denied by policy rule ${verdict.ruleId}`
        : `No policy permits egress to ${dest.host}:${dest.port}`),
    extensions: { action: "sandbox:egress", ruleId: verdict.ruleId ?? null, host: dest.host, port: dest.port },
  });
}

/**
 * The platform's egress proxy: one HTTP forward proxy per sandbox on a private Unix socket (the
 * driver relays the sandbox's `127.0.0.1:3128` to it from inside its network namespace). CONNECT
 * tunnels TLS end to end; plain HTTP goes by absolute URI. Every new connection's destination
 * (host and port as the sandbox named them) is decided first; DNS names that resolve to private or
 * loopback addresses are refused whatever the policy says, so a sandbox never reaches the host's
 * own services through it.
 */
export class EgressProxy {
  private readonly options: EgressProxyOptions;
  private readonly dir: string;
  private readonly servers = new Map<string, { server: Server; sockets: Set<Duplex> }>();
  private opened = 0;

  constructor(options: EgressProxyOptions) {
    this.options = options;
    this.dir = mkdtempSync(join(tmpdir(), "ap-egress-"));
  }

  /** Starts the sandbox's proxy and returns the path of its Unix socket. */
  async open(sandboxId: string): Promise<string> {
    await this.close(sandboxId);
    // A fresh name each time: closing a previous listener unlinks its own path, never this one.
    const path = join(this.dir, `${sandboxId}-${++this.opened}.sock`);
    const sockets = new Set<Duplex>();
    const track = (s: Duplex) => {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
    };
    // The sandbox's own connections (not the upstream ones) count; those past the limit are answered 429.
    const limit = this.options.maxConnections ?? DEFAULT_MAX_EGRESS_CONNECTIONS;
    const clients = new Set<Duplex>();
    const over = new WeakSet<Duplex>();
    const tooMany = () =>
      new ProblemError("rate-limited", {
        detail: `This sandbox holds ${limit} egress connections already; close some and retry`,
        headers: { "retry-after": "1" },
      });
    // New attempts are refused before anything is decided, resolved or dialed for them.
    const rate = this.options.attemptRate ?? DEFAULT_EGRESS_ATTEMPT_RATE;
    const attempts = new AttemptBucket(rate, this.options.attemptBurst ?? DEFAULT_EGRESS_ATTEMPT_BURST);
    const tooFast = (): ProblemError | undefined => {
      const waitMs = attempts.take();
      if (waitMs === 0) return undefined;
      const refused = attempts.report();
      if (refused > 0) this.options.logger.warn({ sandboxId, rate, refused }, "egress attempts rate limited");
      return new ProblemError("rate-limited", {
        detail: `This sandbox opens egress connections faster than ${rate} a second; retry shortly`,
        headers: { "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) },
      });
    };
    const server = createServer((req, res) => {
      const refusal = over.has(req.socket) ? tooMany() : tooFast();
      if (refusal) {
        refuseRequest(res, refusal);
        return;
      }
      void this.forward(sandboxId, req, res, track).catch((err) => {
        this.options.logger.warn({ err, sandboxId }, "egress request failed");
        refuseRequest(res, new ProblemError("bad-gateway", { detail: "Upstream failed" }));
      });
    });
    server.on("connection", (socket: Socket) => {
      track(socket);
      if (clients.size >= limit) {
        over.add(socket);
        socket.setTimeout(OVER_LIMIT_GRACE_MS, () => socket.destroy());
        return;
      }
      clients.add(socket);
      socket.once("close", () => clients.delete(socket));
    });
    server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
      const refusal = over.has(client) ? tooMany() : tooFast();
      if (refusal) {
        client.on("error", () => {});
        refuseTunnel(client, refusal);
        return;
      }
      void this.tunnel(sandboxId, req, client, head, track).catch((err) => {
        this.options.logger.warn({ err, sandboxId }, "egress tunnel failed");
        client.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    this.servers.set(sandboxId, { server, sockets });
    return path;
  }

  /** Stops the sandbox's proxy and cuts its open connections. */
  async close(sandboxId: string): Promise<void> {
    const entry = this.servers.get(sandboxId);
    if (!entry) return;
    this.servers.delete(sandboxId);
    for (const socket of entry.sockets) socket.destroy();
    await new Promise<void>((resolve) => entry.server.close(() => resolve()));
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.servers.keys()].map((id) => this.close(id)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private idleTimeoutMs(): number {
    return this.options.idleTimeoutMs ?? DEFAULT_EGRESS_IDLE_TIMEOUT_MS;
  }

  /** Decides, then resolves the destination to an address that may be dialed. */
  private async admit(sandboxId: string, dest: Destination): Promise<Destination> {
    const platform = this.options.platform;
    const toPlatform = platform !== undefined && platform.host === dest.host && platform.port === dest.port;
    const verdict = await this.options.decide(sandboxId, dest.host, dest.port, toPlatform);
    if (!verdict.allowed) throw denied(dest, verdict);
    // The operator named this address, not a tenant: it may be private (or the host's loopback).
    if (toPlatform) return { ...platform.dial };
    const map = this.options.hostMap;
    const mapped = map?.[`${dest.host}:${dest.port}`] ?? map?.[dest.host];
    if (mapped) {
      const m = /^(.*?)(?::(\d+))?$/.exec(mapped) as RegExpExecArray;
      return { host: m[1] as string, port: m[2] ? Number(m[2]) : dest.port };
    }
    const address = isIP(dest.host) ? dest.host : (await lookup(dest.host)).address;
    if (isPrivateAddress(address)) {
      await this.options.refused?.(sandboxId, dest.host, dest.port, "private address").catch((err: unknown) => {
        this.options.logger.warn({ err, sandboxId }, "egress refusal not recorded");
      });
      throw new ProblemError("policy-denied", {
        detail: `${dest.host} resolves to a private address; the egress proxy reaches public hosts only`,
        extensions: { action: "sandbox:egress", ruleId: null, host: dest.host, port: dest.port },
      });
    }
    return { host: address, port: dest.port };
  }

  private async tunnel(
    sandboxId: string,
    req: IncomingMessage,
    client: Duplex,
    head: Buffer,
    track: (s: Duplex) => void,
  ): Promise<void> {
    client.on("error", () => {});
    const dest = parseAuthority(req.url ?? "");
    if (!dest) {
      refuseTunnel(client, new ProblemError("bad-request", { detail: "CONNECT needs host:port" }));
      return;
    }
    // Idle means no byte either way: the client's socket sees both (what it sends, what it is sent).
    const idleMs = this.idleTimeoutMs();
    let dialed: Socket | undefined;
    let established = false;
    (client as Socket).setTimeout(idleMs, () => {
      // Refused, and the sandbox never closed its side: nothing more will be said on it.
      if (client.writableEnded) {
        client.destroy();
        return;
      }
      if (dialed && established) {
        endBoth(client, dialed);
        return;
      }
      dialed?.destroy();
      refuseTunnel(client, timedOut(dest, idleMs));
    });
    let target: Destination;
    try {
      target = await this.admit(sandboxId, dest);
    } catch (err) {
      refuseTunnel(client, asProblem(err, dest));
      return;
    }
    // The sandbox gave up (or timed out) while its destination was decided: nothing to dial for.
    if (client.destroyed || client.writableEnded) return;
    const upstream: Socket = connect(target.port, target.host);
    dialed = upstream;
    track(upstream);
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
    upstream.once("error", () => {
      if (upstream.connecting) {
        refuseTunnel(
          client,
          new ProblemError("bad-gateway", { detail: `Cannot connect to ${dest.host}:${dest.port}` }),
        );
      } else client.destroy();
    });
    upstream.once("connect", () => {
      established = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
  }

  private async forward(
    sandboxId: string,
    req: IncomingMessage,
    res: ServerResponse,
    track: (s: Duplex) => void,
  ): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      refuseRequest(res, new ProblemError("bad-request", { detail: "A forward proxy needs an absolute http:// URI" }));
      return;
    }
    if (url.protocol !== "http:") {
      refuseRequest(
        res,
        new ProblemError("bad-request", { detail: "Use CONNECT for https; plain requests need http://" }),
      );
      return;
    }
    const dest = normalize(url.hostname.replace(/^\[|\]$/g, ""), url.port ? Number(url.port) : 80);
    if (!dest) {
      refuseRequest(res, new ProblemError("bad-request", { detail: `Bad destination ${url.host}` }));
      return;
    }
    // Idle means no byte either way on the sandbox's socket (its request body, the answer it is sent).
    const idleMs = this.idleTimeoutMs();
    let dialed: ClientRequest | undefined;
    let cut = false;
    res.setTimeout(idleMs, () => {
      cut = true;
      dialed?.destroy();
      if (res.headersSent) res.destroy();
      else refuseRequest(res, timedOut(dest, idleMs));
    });
    let target: Destination;
    try {
      target = await this.admit(sandboxId, dest);
    } catch (err) {
      refuseRequest(res, asProblem(err, dest));
      return;
    }
    if (cut || req.socket.destroyed) return;
    const headers = { ...forwardedHeaders(req.headers), host: url.host };
    const upstream = httpRequest({
      host: target.host,
      port: target.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      agent: false,
    });
    dialed = upstream;
    upstream.on("socket", track);
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardedHeaders(answer.headers));
      answer.pipe(res);
    });
    upstream.on("error", () => {
      if (!cut) {
        refuseRequest(res, new ProblemError("bad-gateway", { detail: `Cannot reach ${dest.host}:${dest.port}` }));
      }
    });
    req.pipe(upstream);
  }
}

function timedOut(dest: Destination, idleMs: number): ProblemError {
  return new ProblemError("gateway-timeout", {
    detail: `Nothing went to or came from ${dest.host}:${dest.port} for ${idleMs / 1000} s`,
  });
}

function asProblem(err: unknown, dest: Destination): ProblemError {
  if (err instanceof ProblemError) return err;
  const code = (err as { code?: string }).code;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return new ProblemError("bad-gateway", { detail: `Cannot resolve ${dest.host}` });
  }
  return new ProblemError("bad-gateway", { detail: `Cannot reach ${dest.host}:${dest.port}` });
}
