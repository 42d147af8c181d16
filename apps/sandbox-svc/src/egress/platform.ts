import { isIP } from "node:net";

/** The name a sandbox uses for the platform when the platform's own address is loopback. */
export const PLATFORM_HOST_IN_SANDBOX = "agentplane.internal";

/**
 * The platform's own API as a destination of the egress proxy: the `host:port` sandboxes name
 * (from their `AGENTPLANE_API_URL`), and where the proxy dials for it. The operator configured it,
 * so unlike a destination a tenant names it may be a private or loopback address.
 */
export interface PlatformDestination {
  /** Host as the sandbox names it (lower case, no brackets). */
  host: string;
  port: number;
  /** Where the proxy connects for it. */
  dial: { host: string; port: number };
  /** The `AGENTPLANE_API_URL` a sandbox receives. */
  sandboxUrl: string;
}

function isLoopback(hostname: string): boolean {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return true;
  if (isIP(hostname) === 4) return hostname.startsWith("127.");
  return hostname === "::1";
}

/**
 * Where sandboxes reach the platform. A loopback address means the host's loopback, which a
 * sandbox's own network namespace cannot see: sandboxes get `agentplane.internal` instead, and
 * the proxy dials the loopback address for it. Any other address is kept as configured.
 */
export function platformDestination(apiUrl: string): PlatformDestination {
  const url = new URL(apiUrl);
  const hostname = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  if (!isLoopback(hostname)) {
    return { host: hostname, port, dial: { host: hostname, port }, sandboxUrl: url.toString().replace(/\/$/, "") };
  }
  const inSandbox = new URL(url);
  inSandbox.hostname = PLATFORM_HOST_IN_SANDBOX;
  return {
    host: PLATFORM_HOST_IN_SANDBOX,
    port,
    dial: { host: hostname === "localhost" || hostname.endsWith(".localhost") ? "127.0.0.1" : hostname, port },
    sandboxUrl: inSandbox.toString().replace(/\/$/, ""),
  };
}
