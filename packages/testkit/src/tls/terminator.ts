import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:tls";

export interface TlsTerminator {
  /** `https://127.0.0.1:<port>`: TLS here, plain TCP to the target. */
  url: string;
  port: number;
  /** The self-signed certificate (PEM), for clients that verify against it. */
  certificate: string;
  close(): Promise<void>;
}

/**
 * A self-signed certificate (by default for 127.0.0.1 and localhost), made with the system's
 * `openssl` (Node cannot issue certificates). Valid for a day.
 */
export function selfSignedCertificate(
  commonName = "127.0.0.1",
  altNames = "IP:127.0.0.1,DNS:localhost",
): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "tls-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        `/CN=${commonName}`,
        "-addext",
        `subjectAltName=${altNames}`,
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Terminates TLS in front of a plain-HTTP server, as a load balancer or ingress does: each TLS
 * connection becomes one TCP connection to `target` (upgrades such as WebSocket pass through).
 */
export async function startTlsTerminator(target: { host: string; port: number }): Promise<TlsTerminator> {
  const { key, cert } = selfSignedCertificate();
  const sockets = new Set<Socket>();
  const server: Server = createServer({ key, cert }, (client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    certificate: cert,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
