import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";

/** `::ffff:10.0.0.1` as `10.0.0.1`, so IPv4 ranges match an IPv4 peer of a dual-stack socket. */
function plain(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * Parses TRUSTED_PROXIES: addresses and CIDR ranges, comma-separated. Throws naming the first
 * entry that is neither.
 */
export function parseTrustedProxies(value: string): BlockList {
  const list = new BlockList();
  for (const raw of value.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(address);
    const bits = prefix === undefined ? undefined : Number(prefix);
    const max = family === 4 ? 32 : 128;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= max))
    )
      throw new Error(`"${entry}" is not an IP address or a CIDR range (such as 10.0.0.0/8)`);
    const type = family === 4 ? "ipv4" : "ipv6";
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, bits, type);
  }
  return list;
}

/**
 * The address a request came from: the socket's peer, or, when that peer is a trusted proxy (a
 * load balancer or ingress in front of the gateway), the nearest address in `X-Forwarded-For` that
 * is not one: read from the right, as each proxy appends the address it was reached from, so a
 * client cannot name itself by sending the header.
 */
export class ClientAddresses {
  readonly #trusted: BlockList | undefined;

  constructor(trusted: BlockList | undefined) {
    this.#trusted = trusted;
  }

  #isTrusted(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && (this.#trusted?.check(address, family === 4 ? "ipv4" : "ipv6") ?? false);
  }

  of(incoming: IncomingMessage | undefined): string | undefined {
    const peer = incoming?.socket?.remoteAddress;
    if (!peer) return undefined;
    // An IPv4 client of a dual-stack listener (HOST=::) is named as the IPv4 address it is.
    let client = plain(peer);
    if (!this.#trusted || !this.#isTrusted(client)) return client;
    const header = incoming.headers["x-forwarded-for"];
    const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plain((hops[i] ?? "").trim());
      // A hop that is no address (garbage, or a port appended) ends the walk at the last good one.
      if (isIP(hop) === 0) break;
      client = hop;
      if (!this.#isTrusted(hop)) break;
    }
    return client;
  }
}
