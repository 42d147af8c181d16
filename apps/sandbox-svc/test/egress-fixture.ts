import { existsSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
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
