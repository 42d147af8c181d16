import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which destinations a call a tenant can aim (connectors, their discovery, AWS endpoints, sandbox
 * egress) may reach. Only globally routable unicast addresses pass by default: loopback, private,
 * link-local (cloud metadata 169.254.169.254), unique-local (AWS fd00:ec2::254), unspecified,
 * multicast, reserved and every IPv6 form that embeds an IPv4 address (IPv4-compatible `::/96`,
 * mapped, translated, NAT64, 6to4, Teredo) are refused. Operators open internal destinations
 * explicitly with `CONNECTOR_ALLOWED_HOSTS`: `host` (any port), `host:port`, or an IP or CIDR range.
 */
export class AddressPolicy {
  private readonly hosts = new Set<string>();
  private readonly hostPorts = new Set<string>();
  private readonly ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];

  constructor(allowed: readonly string[] = []) {
    for (const raw of allowed) {
      const entry = raw.trim().toLowerCase();
      if (!entry) continue;
      if (entry.includes("/")) {
        this.ranges.push(ipaddr.parseCIDR(entry));
      } else if (isIP(stripBrackets(entry))) {
        const ip = ipaddr.parse(stripBrackets(entry));
        this.ranges.push([ip, ip.kind() === "ipv4" ? 32 : 128]);
      } else if (/^\[.+\]:\d+$/.test(entry) || /^[^:]+:\d+$/.test(entry)) {
        this.hostPorts.add(entry);
      } else {
        this.hosts.add(entry);
      }
    }
  }

  /** Parses `CONNECTOR_ALLOWED_HOSTS` (comma-separated); throws naming the bad entry. */
  static fromEnv(value: string | undefined): AddressPolicy {
    const entries = (value ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    for (const entry of entries) {
      if (entry.includes("/") && !ipaddr.isValidCIDR(entry)) {
        throw new Error(`CONNECTOR_ALLOWED_HOSTS: ${entry} is not a valid CIDR range`);
      }
    }
    return new AddressPolicy(entries);
  }

  /** The host (or host:port) itself is allowed: its addresses are not checked. */
  allowsHost(hostname: string, port: number): boolean {
    const host = stripBrackets(hostname.toLowerCase());
    if (this.hosts.has(host)) return true;
    const withPort = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
    return this.hostPorts.has(withPort);
  }

  /** True when a connection to this address may be made. */
  allowsAddress(address: string): boolean {
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      ip = ipaddr.parse(stripBrackets(address));
    } catch {
      return false;
    }
    if (this.inAllowedRange(ip)) return true;
    if (ip.kind() === "ipv6") {
      const v6 = ip as ipaddr.IPv6;
      // An address that carries an IPv4 address is reached (by the kernel, a NAT64 gateway or a
      // tunnel) at that IPv4 address, which a global-unicast look at the IPv6 form cannot judge:
      // refused, unless an operator allowed the IPv4 address it carries.
      if (EMBEDDED_IPV4.some(([range, bits]) => v6.match(range, bits))) {
        const carried = lastIpv4(v6);
        return carried !== undefined && this.inAllowedRange(carried);
      }
    }
    return ip.range() === "unicast";
  }

  private inAllowedRange(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.ranges.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
  }
}

/**
 * IPv6 prefixes whose addresses carry an IPv4 address: IPv4-compatible (`::/96`, e.g. `::127.0.0.1`),
 * IPv4-mapped, IPv4-translated (RFC 6145), NAT64 (well-known and local-use), 6to4 and Teredo.
 */
const EMBEDDED_IPV4 = [
  "::/96",
  "::ffff:0:0/96",
  "::ffff:0:0:0/96",
  "64:ff9b::/96",
  "64:ff9b:1::/48",
  "2002::/16",
  "2001::/32",
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

/** Prefixes whose carried IPv4 address is the last 32 bits (6to4 and Teredo place it elsewhere). */
const TRAILING_IPV4 = EMBEDDED_IPV4.slice(0, 4);

function lastIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (!TRAILING_IPV4.some(([range, bits]) => ip.match(range, bits))) return undefined;
  const bytes = ip.toByteArray().slice(12);
  return new ipaddr.IPv4(bytes);
}

export function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}
