import { isIP } from "node:net";

/**
 * The Host names the runtime answers to (a defence against DNS rebinding: a web page whose domain
 * is made to resolve to 127.0.0.1 reaches a loopback runtime, but its requests still carry the
 * page's own name in `Host`).
 */

/** One entry of AGENT_ALLOWED_HOSTS: a name (or `*.suffix`), with a port or any port. */
export interface HostPattern {
  /** Lower case; IPv6 in brackets (`[::1]`); `*.example.com` matches any name below example.com. */
  host: string;
  port: number | undefined;
}

/** What the check is made of; `undefined` allowList: the operator set none. */
export interface HostPolicy {
  /** `true` when the runtime listens on a loopback address: loopback names on its port only. */
  loopbackBind: boolean;
  /** The host and port of AGENT_HTTP_URL, the address the runtime is published at. */
  published: { host: string; port: number } | undefined;
  /** AGENT_ALLOWED_HOSTS; `any` for `*` (no check at all). */
  allowList: HostPattern[] | "any" | undefined;
  /** This machine's host name, lower case (answered on a non-loopback address without a list). */
  machineName?: string | undefined;
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;

function validName(host: string): boolean {
  if (IPV6.test(host)) return host.includes(":");
  const v4 = IPV4.exec(host);
  if (v4) return v4.slice(1).every((part) => Number(part) <= 255);
  return host.length <= 253 && host.split(".").every((label) => LABEL.test(label));
}

/**
 * Splits `name`, `name:port`, `[v6]` or `[v6]:port` (a Host header or an allow-list entry) into a
 * lower-case host and a port, or undefined when it is neither. A trailing dot is dropped.
 */
export function splitHost(value: string): { host: string; port: number | undefined } | undefined {
  const text = value.trim().toLowerCase();
  let host: string;
  let portText: string | undefined;
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end < 0) return undefined;
    host = text.slice(0, end + 1);
    const rest = text.slice(end + 1);
    if (rest !== "" && !rest.startsWith(":")) return undefined;
    portText = rest === "" ? undefined : rest.slice(1);
  } else {
    const parts = text.split(":");
    if (parts.length > 2) return undefined;
    host = parts[0] ?? "";
    portText = parts[1];
  }
  host = host.replace(/\.$/, "");
  if (host === "") return undefined;
  if (portText === undefined) return { host, port: undefined };
  if (!/^\d{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  return port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/**
 * AGENT_ALLOWED_HOSTS: comma-separated names, `*.suffix` wildcards or IP addresses, each with an
 * optional `:port`; `*` alone switches the check off. Throws a message naming the bad entry.
 */
export function parseAllowedHosts(value: string): HostPattern[] | "any" {
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 1 && entries[0] === "*") return "any";
  return entries.map((entry) => {
    const split = splitHost(entry);
    const name = split?.host.startsWith("*.") ? split.host.slice(2) : split?.host;
    if (!split || !name || !validName(name)) {
      throw new Error(
        `"${entry}" is not a host name, *.domain, IP address or [IPv6] address (with an optional :port); "*" alone allows any host`,
      );
    }
    return split;
  });
}

/** Whether a listening address is a loopback one (only this machine can reach it). */
export function isLoopbackAddress(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

function matches(pattern: HostPattern, host: string, port: number): boolean {
  if (pattern.port !== undefined && pattern.port !== port) return false;
  if (pattern.host.startsWith("*.")) return host.endsWith(pattern.host.slice(1));
  return pattern.host === host;
}

/**
 * Whether a request with this Host header may be served. `localPort` is the port the request
 * came in on: loopback names are allowed for it alone (a Host without a port means 80).
 */
export function hostAllowed(policy: HostPolicy, hostHeader: string | undefined, localPort: number): boolean {
  if (policy.allowList === "any") return true;
  // HTTP/1.1 clients always send Host (the server refuses a request without one); a request built
  // in process has none. A browser, the only client DNS rebinding can drive, always sends it.
  if (hostHeader === undefined) return true;
  const split = splitHost(hostHeader);
  if (!split) return false;
  const { host } = split;
  if (!policy.loopbackBind && policy.allowList === undefined) return unlistedNameAllowed(policy, host);
  const port = split.port ?? 80;
  if (port === localPort && isLoopbackAddress(host)) return true;
  if (policy.published && policy.published.host === host && policy.published.port === port) return true;
  return (policy.allowList ?? []).some((pattern) => matches(pattern, host, port));
}

/**
 * The names a runtime on a non-loopback address answers to without AGENT_ALLOWED_HOSTS, on any
 * port (a container's port is often mapped to another): what DNS rebinding cannot use, as only a
 * public name its page's author controls resolves to this machine from a person's browser. IP
 * addresses (health probes, `docker run -p`), `localhost` and `*.localhost`, a name of one label
 * (a compose or Kubernetes service in the same namespace: resolved through the local search
 * domains, never registrable), AGENT_HTTP_URL's host and the machine's own name.
 */
function unlistedNameAllowed(policy: HostPolicy, host: string): boolean {
  if (isIP(host.replace(/^\[|\]$/g, "")) !== 0) return true;
  if (isLoopbackAddress(host) || !host.includes(".")) return true;
  return host === policy.published?.host || host === policy.machineName;
}

/** The host and port of a URL, as they appear in the Host header of requests sent to it. */
export function publishedAddress(url: string | undefined): HostPolicy["published"] {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    const port = parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80;
    return { host: parsed.hostname.toLowerCase().replace(/\.$/, ""), port };
  } catch {
    return undefined;
  }
}
