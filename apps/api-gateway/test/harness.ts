import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { ServiceName } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import {
  generateInternalKeys,
  httpFetch,
  inProcessFetch,
  type Logger,
  type RunningServer,
  ServiceClient,
  serveFetch,
  silentLogger,
} from "@agentplane/service-kit";
import { createTenancyService } from "@agentplane/tenancy-svc";
import { WebSocketServer } from "ws";
import { createGateway, type Gateway } from "../src/app.ts";
import { Authenticator } from "../src/authn/authenticator.ts";
import type { OidcVerifier } from "../src/authn/oidc.ts";
import type { GatewayTarget } from "../src/deps.ts";
import type { IngressRouter } from "../src/ingress-router.ts";
import { MemoryRateLimiter } from "../src/rate-limit.ts";

export interface Harness {
  url: string;
  ownerToken: string;
  bus: MemoryBus;
  gateway: Gateway;
  database: Database;
  keys: Awaited<ReturnType<typeof generateInternalKeys>>;
  tenancy: Awaited<ReturnType<typeof createTenancyService>>;
  close(): Promise<void>;
}

/** A real tenancy service (PGlite) behind a real gateway on a port; extra targets can be added. */
export async function startHarness(
  options: {
    extraTargets?: Partial<Record<ServiceName, GatewayTarget>>;
    rateLimit?: number;
    /** Per user, all of its tokens together (default 4 × `rateLimit`). */
    userRateLimit?: number;
    oidc?: OidcVerifier;
    /** How long a resolved API token is trusted (revocation latency). */
    opaqueTtlMs?: number;
    /** The gateway's logger (none by default). */
    logger?: Logger;
    /** Requests reach tenancy over HTTP (its own server on a port), as when distributed. */
    tenancyOverHttp?: boolean;
    /** TRUSTED_PROXIES, as the gateway's setting takes it. */
    trustedProxies?: string;
    /** The installation's public address (tenancy's and the gateway's PUBLIC_URL). */
    publicUrl?: string;
    /** Host-based ingress to sandbox ports (SANDBOX_INGRESS_HOST). */
    ingress?: IngressRouter;
  } = {},
): Promise<Harness> {
  const database = await openDatabase("pglite://memory");
  const bus = new MemoryBus();
  const keys = await generateInternalKeys();
  const ownerToken = `owner_${randomBytes(24).toString("hex")}`;
  const tenancy = await createTenancyService({
    database,
    bus,
    keys,
    logger: silentLogger(),
    config: {
      secretKey: randomBytes(32),
      publicUrl: options.publicUrl ?? "http://localhost",
      bootstrapToken: ownerToken,
    },
  });
  const tenancyServer = options.tenancyOverHttp
    ? await serveFetch((req) => tenancy.fetch(req), { port: 0, hostname: "127.0.0.1" })
    : undefined;
  const rateLimit = { limit: options.rateLimit ?? 10_000, windowSeconds: 60 };
  const userRateLimit = { limit: options.userRateLimit ?? rateLimit.limit * 4, windowSeconds: 60 };
  const gateway = createGateway({
    targets: {
      tenancy: {
        fetch: tenancyServer ? httpFetch(tenancyServer.url) : inProcessFetch(tenancy),
        ready: () => tenancy.ready(),
      },
      ...options.extraTargets,
    },
    keys,
    authenticator: new Authenticator({
      tenancy: new ServiceClient("tenancy", inProcessFetch(tenancy), keys),
      oidc: options.oidc,
      ...(options.opaqueTtlMs !== undefined ? { opaqueTtlMs: options.opaqueTtlMs } : {}),
    }),
    rateLimiter: new MemoryRateLimiter(rateLimit),
    rateLimit,
    userRateLimiter: new MemoryRateLimiter(userRateLimit),
    userRateLimit,
    bus,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.trustedProxies ? { trustedProxies: options.trustedProxies } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.ingress ? { ingress: options.ingress } : {}),
  });
  const server: RunningServer = await serveFetch(
    (req, env: { incoming?: IncomingMessage } | undefined) => gateway.fetch(req, env),
    { port: 0, hostname: "127.0.0.1" },
  );
  server.server.on("upgrade", gateway.handleUpgrade);
  return {
    url: server.url,
    ownerToken,
    bus,
    gateway,
    database,
    keys,
    tenancy,
    async close() {
      await server.close();
      await tenancyServer?.close();
      gateway.close();
      await tenancy.close();
      await bus.close();
      await database.close();
    },
  };
}

export async function call(
  h: Harness,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? h.ownerToken : options.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  const res = await fetch(`${h.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    json = { text };
  }
  return { status: res.status, headers: res.headers, body: json };
}

/** A stand-in sandbox service that accepts every WebSocket it is handed (and closes it). */
export function sandboxStandIn(): GatewayTarget {
  const wss = new WebSocketServer({ noServer: true });
  wss.on("connection", (socket) => socket.close());
  return {
    fetch: async () => new Response(null, { status: 204 }),
    upgrade: {
      kind: "in-process",
      handle: (req: IncomingMessage, socket: Duplex, head: Buffer) =>
        wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req)),
    },
    ready: async () => true,
  };
}
