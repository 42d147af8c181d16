import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which destinations a connector may reach. Only globally routable unicast addresses pass by
 * default: loopback, private, link-local (cloud metadata 169.254.169.254), unique-local (AWS
 * fd00:ec2::254), unspecified, multicast, reserved and the IPv6 forms that embed an IPv4 address
 * (mapped, NAT64, 6to4, Teredo) are refused. Operators open internal destinations explicitly with
 * `CONNECTOR_ALLOWED_HOSTS`: `host` (any port), `host:port`, or an IP or CIDR range.
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
    if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
      const v4 = (ip as ipaddr.IPv6).toIPv4Address();
      return this.inAllowedRange(v4) || v4.range() === "unicast";
    }
    return ip.range() === "unicast";
  }

  private inAllowedRange(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.ranges.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
  }
}

export function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}
