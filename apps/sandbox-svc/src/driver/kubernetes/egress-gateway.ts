import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { type AddressInfo, connect } from "node:net";
import type { Duplex } from "node:stream";
import { ProblemError } from "@agentplane/problem-details";
import type { Logger } from "@agentplane/service-kit";
import type { EgressProxy } from "../../egress/proxy.ts";
import type { EgressCredentials } from "./egress-credential.ts";

export interface EgressGatewayOptions {
  /** The platform's egress proxy: it decides each destination for the sandbox it serves. */
  proxy: EgressProxy;
  credentials: EgressCredentials;
  logger: Logger;
  /** A sandbox's proxy is closed after this long without a connection (default 10 minutes). */
  idleMs?: number;
}

interface Opened {
  path: Promise<string>;
  active: number;
  lastUsed: number;
}

const REALM = 'Basic realm="agentplane-egress"';

/** 407 (a proxy's 401) as problem+json: the sandbox did not prove which one it is. */
function proxyAuthRequired(): { headers: Record<string, string>; body: string } {
  const error = new ProblemError("unauthenticated", {
    detail: "The egress proxy needs this sandbox's proxy credentials (HTTPS_PROXY as given to the sandbox)",
  });
  const body = JSON.stringify({ ...error.toBody(), status: 407, title: "Proxy Authentication Required" });
  return {
    headers: {
      "content-type": "application/problem+json",
      "content-length": String(Buffer.byteLength(body)),
      "proxy-authenticate": REALM,
      connection: "close",
    },
    body,
  };
}

/**
 * The egress proxy of a cluster, as its own Deployment: one TCP listener for every sandbox Pod. Each
 * request names its sandbox with `Proxy-Authorization` (a per-sandbox credential, see
 * EgressCredentials); an unproven one is refused with 407. A proven one is handed, unchanged but for
 * that header, to the sandbox's own proxy of EgressProxy (the one the local driver's sandboxes use),
 * which decides the destination under the sandbox's policies and refuses private addresses.
 */
export class EgressGateway {
  private readonly options: EgressGatewayOptions;
  private readonly server: Server;
  private readonly opened = new Map<string, Opened>();
  private readonly sockets = new Set<Duplex>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: EgressGatewayOptions) {
    this.options = options;
    this.server = createServer((req, res) => {
      void this.forward(req, res).catch((err) => {
        options.logger.warn({ err }, "egress request failed");
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
    });
    this.server.on("connection", (socket) => this.track(socket));
    this.server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
      void this.tunnel(req, client, head).catch((err) => {
        options.logger.warn({ err }, "egress tunnel failed");
        client.destroy();
      });
    });
    const idleMs = options.idleMs ?? 600_000;
    this.sweeper = setInterval(() => void this.sweep(idleMs), Math.min(idleMs, 60_000));
    this.sweeper.unref();
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
  }

  async listen(port: number, host = "0.0.0.0"): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => resolve());
    });
    return this.server.address() as AddressInfo;
  }

  /** The sandbox's proxy socket, opened on first use; counted as in use until `release`. */
  private acquire(sandboxId: string): Promise<string> {
    let entry = this.opened.get(sandboxId);
    if (!entry) {
      entry = { path: this.options.proxy.open(sandboxId), active: 0, lastUsed: Date.now() };
      this.opened.set(sandboxId, entry);
      entry.path.catch(() => this.opened.delete(sandboxId));
    }
    entry.active++;
    entry.lastUsed = Date.now();
    return entry.path;
  }

  private release(sandboxId: string): void {
    const entry = this.opened.get(sandboxId);
    if (!entry) return;
    entry.active--;
    entry.lastUsed = Date.now();
  }

  private async sweep(idleMs: number): Promise<void> {
    const now = Date.now();
    for (const [sandboxId, entry] of this.opened) {
      if (entry.active > 0 || now - entry.lastUsed < idleMs) continue;
      this.opened.delete(sandboxId);
      await this.options.proxy.close(sandboxId);
    }
  }

  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on("error", () => {});
    const sandboxId = this.options.credentials.verify(req.headers["proxy-authorization"]);
    if (!sandboxId) {
      const { headers, body } = proxyAuthRequired();
      const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
      client.end(`HTTP/1.1 407 Proxy Authentication Required\r\n${lines.join("")}\r\n${body}`);
      return;
    }
    const path = await this.acquire(sandboxId);
    const inner = connect(path);
    this.track(inner);
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      this.release(sandboxId);
      client.destroy();
      inner.destroy();
    };
    inner.once("error", done);
    inner.once("close", done);
    client.once("close", done);
    // The same CONNECT without the credential; the sandbox's proxy answers (200 or a problem).
    inner.write(`CONNECT ${req.url} HTTP/1.1\r\nhost: ${req.url}\r\n\r\n`);
    if (head.length > 0) inner.write(head);
    inner.pipe(client);
    client.pipe(inner);
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sandboxId = this.options.credentials.verify(req.headers["proxy-authorization"]);
    if (!sandboxId) {
      const { headers, body } = proxyAuthRequired();
      res.writeHead(407, headers);
      res.end(body);
      return;
    }
    const socketPath = await this.acquire(sandboxId);
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    const inner = httpRequest({ socketPath, method: req.method, path: req.url, headers, agent: false });
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      this.release(sandboxId);
    };
    res.once("close", done);
    inner.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
      answer.pipe(res);
    });
    inner.on("error", () => {
      done();
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(inner);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.options.proxy.closeAll();
  }
}
