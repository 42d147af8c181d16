import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { selfSignedCertificate } from "@agentplane/testkit/tls";

/** The egress tests run curl inside the sandbox (the default image shows the host's /usr). */
export function requireSandboxCurl(): { available: boolean; reason: string } {
  const available = existsSync("/usr/bin/curl") && existsSync("/usr/bin/openssl");
  if (!available && process.env.CI === "true") {
    throw new Error("the egress tests need curl and openssl under /usr/bin (apt-get install curl openssl)");
  }
  return { available, reason: available ? "" : " (skipped: curl or openssl missing under /usr/bin)" };
}

export interface Upstreams {
  /** Plain HTTP on 127.0.0.1: answers `<name> saw <path>`. */
  http: Server;
  /** HTTPS on 127.0.0.1 with a certificate for `tlsName` (`secure.test`; its CA file in `certPem`). */
  https: Server;
  certPem: string;
  /** The test-only host map: `registry.test`, `<tlsName>:443` and `other.test` to the servers above. */
  hostMap: Record<string, string>;
  close(): Promise<void>;
}

/** Local stand-ins for internet hosts: an HTTP and an HTTPS server on 127.0.0.1, port 0. */
export async function startUpstreams(tlsName = "secure.test"): Promise<Upstreams> {
  const { key, cert: certPem } = selfSignedCertificate(tlsName, `DNS:${tlsName}`);
  const answer = (name: string) => (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader("content-type", "text/plain");
    res.end(`${name} saw ${req.url} host=${req.headers.host} proxyauth=${req.headers["proxy-authorization"] ?? "-"}`);
  };
  const http = createHttpServer(answer("http"));
  const https = createHttpsServer({ key, cert: certPem }, answer("https"));
  await Promise.all([
    new Promise<void>((r) => http.listen(0, "127.0.0.1", r)),
    new Promise<void>((r) => https.listen(0, "127.0.0.1", r)),
  ]);
  const port = (s: Server) => (s.address() as AddressInfo).port;
  return {
    http,
    https,
    certPem,
    hostMap: {
      "registry.test": `127.0.0.1:${port(http)}`,
      "other.test": `127.0.0.1:${port(http)}`,
      [`${tlsName}:443`]: `127.0.0.1:${port(https)}`,
    },
    async close() {
      http.closeAllConnections();
      https.closeAllConnections();
      await Promise.all([new Promise((r) => http.close(r)), new Promise((r) => https.close(r))]);
    },
  };
}

/** A stand-in for the egress proxy: each sandbox's Unix socket answers `proxied` to every connection. */
export class FakeProxy {
  private readonly dir = mkdtempSync(join(tmpdir(), "relay-proxy-"));
  private readonly servers = new Map<string, NetServer>();
  async open(sandboxId: string): Promise<string> {
    await this.close(sandboxId);
    const path = join(this.dir, `${sandboxId}.sock`);
    rmSync(path, { force: true });
    const server = createNetServer((c) => c.end("proxied\n"));
    await new Promise<void>((resolve) => server.listen(path, resolve));
    this.servers.set(sandboxId, server);
    return path;
  }
  async close(sandboxId: string): Promise<void> {
    const server = this.servers.get(sandboxId);
    this.servers.delete(sandboxId);
    if (server) await new Promise((resolve) => server.close(resolve));
  }
  async closeAll(): Promise<void> {
    await Promise.all([...this.servers.keys()].map((id) => this.close(id)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
