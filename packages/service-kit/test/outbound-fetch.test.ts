import { type LocalServer, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddressPolicy, FetchRefusedError, type Resolver, SafeFetcher } from "../src/outbound/index.ts";

const NAMES: Record<string, string[]> = {
  "localhost.test": ["127.0.0.1", "::1"],
  "private.test": ["192.168.0.10"],
  "metadata.test": ["169.254.169.254"],
  "ec2v6.test": ["fd00:ec2::254"],
  "api.test": ["127.0.0.1"],
  "mixed.test": ["10.0.0.7", "127.0.0.1"],
  "compat.test": ["::7f00:1"],
  "nat64.test": ["64:ff9b::a9fe:a9fe"],
};
const resolver: Resolver = async (host) => {
  const addresses = NAMES[host];
  if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

async function reason(fetcher: SafeFetcher, url: string): Promise<string> {
  try {
    await fetcher.fetchBody(url);
    return "fetched";
  } catch (error) {
    if (error instanceof FetchRefusedError) return error.reason;
    throw error;
  }
}

let server: LocalServer;
let hits = 0;
beforeAll(async () => {
  server = await startLocalServer((req, res) => {
    hits++;
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/ok") return void res.end("hello");
    if (url.pathname === "/redirect") {
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/ok" });
      return void res.end();
    }
    if (url.pathname.startsWith("/chain/")) {
      const n = Number(url.pathname.slice(7));
      res.writeHead(302, { location: n > 0 ? `/chain/${n - 1}` : "/ok" });
      return void res.end();
    }
    if (url.pathname === "/big") {
      const chunk = Buffer.alloc(1024 * 1024, 97);
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < 11; i++) res.write(chunk);
      return void res.end();
    }
    if (url.pathname === "/slow") return; // never answers
    res.statusCode = 404;
    res.end("nope");
  });
});
afterAll(async () => {
  await server.close();
});

describe("SSRF-safe fetching", () => {
  const closed = new SafeFetcher({ resolve: resolver });
  afterAll(() => closed.close());

  it.each([
    ["loopback", "http://127.0.0.1/"],
    ["loopback elsewhere in 127/8", "http://127.9.8.7/"],
    ["short loopback form", "http://127.1/"],
    ["decimal loopback", "http://2130706433/"],
    ["octal loopback", "http://0177.0.0.1/"],
    ["hex loopback", "http://0x7f.0.0.1/"],
    ["private 10/8", "http://10.1.2.3/"],
    ["private 172.16/12", "http://172.16.0.1/"],
    ["private 192.168/16", "http://192.168.1.1/"],
    ["carrier-grade NAT", "http://100.64.0.1/"],
    ["link-local", "http://169.254.10.10/"],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/"],
    ["decimal cloud metadata", "http://2852039166/"],
    ["unspecified", "http://0.0.0.0/"],
    ["multicast", "http://224.0.0.1/"],
    ["IPv6 loopback", "http://[::1]/"],
    ["IPv6 unspecified", "http://[::]/"],
    ["IPv6 link-local", "http://[fe80::1]/"],
    ["IPv6 unique-local", "http://[fc00::1]/"],
    ["AWS IPv6 metadata", "http://[fd00:ec2::254]/"],
    ["IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/"],
    ["IPv4-mapped metadata in hex", "http://[::ffff:a9fe:a9fe]/"],
    ["NAT64 metadata", "http://[64:ff9b::a9fe:a9fe]/"],
    ["name resolving to loopback", "http://localhost.test/"],
    ["name resolving to private", "http://private.test/"],
    ["name resolving to metadata", "http://metadata.test/"],
    ["name resolving to AWS IPv6 metadata", "http://ec2v6.test/"],
    ["name resolving only to internal addresses", "https://mixed.test/"],
  ])("refuses %s (%s) without the allowlist", async (_label, url) => {
    expect(await reason(closed, url)).toBe("blocked-address");
  });

  it("names the setting that allows an internal destination when it refuses one", async () => {
    for (const url of ["http://127.0.0.1/", "http://localhost.test/"]) {
      const refusal = await closed.fetchBody(url).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(FetchRefusedError);
      expect((refusal as FetchRefusedError).message).toContain("CONNECTOR_ALLOWED_HOSTS");
    }
    expect(() => closed.checkUrl("http://169.254.169.254/")).toThrow(/CONNECTOR_ALLOWED_HOSTS/);
  });

  it("refuses every IPv6 form that carries an IPv4 address, by literal and by name, before connecting", async () => {
    const before = hits;
    const refused: string[] = [];
    for (const host of [
      "[::127.0.0.1]", // IPv4-compatible ::/96, the form that passed before
      "[::7f00:1]",
      "[::a9fe:a9fe]", // ::169.254.169.254
      "[::a00:1]", // ::10.0.0.1
      "[::808:808]", // ::8.8.8.8 still not dialled as an IPv6 address
      "[::ffff:8.8.8.8]", // mapped, even when the IPv4 address is public
      "[::ffff:0:7f00:1]", // IPv4-translated (RFC 6145)
      "[64:ff9b::7f00:1]", // NAT64
      "[64:ff9b:1::7f00:1]", // local-use NAT64
      "[2002:7f00:1::1]", // 6to4 of 127.0.0.1
      "[2001:0:4136:e378:8000:63bf:80ff:fffe]", // Teredo
      "compat.test",
      "nat64.test",
    ]) {
      refused.push(`${host}=${await reason(closed, `http://${host}:${server.port}/ok`)}`);
    }
    expect(refused.filter((r) => !r.endsWith("=blocked-address"))).toEqual([]);
    expect(hits).toBe(before);
    // An operator's IPv4 allowance covers the forms that carry that address, nothing wider.
    const allowed = new AddressPolicy(["127.0.0.0/8"]);
    expect(allowed.allowsAddress("::127.0.0.1")).toBe(true);
    expect(allowed.allowsAddress("::ffff:127.0.0.1")).toBe(true);
    expect(allowed.allowsAddress("::10.0.0.1")).toBe(false);
    expect(allowed.allowsAddress("2002:7f00:1::1")).toBe(false);
  });

  it("refuses other schemes and credentials in URLs", async () => {
    expect(await reason(closed, "file:///etc/passwd")).toBe("invalid-url");
    expect(await reason(closed, "ftp://example.test/")).toBe("invalid-url");
    expect(await reason(closed, "http://user:pw@example.test/")).toBe("invalid-url");
    expect(await reason(closed, "http://nowhere.test/")).toBe("unreachable");
  });

  it("keeps credential headers on a same-origin redirect and drops them on a redirect to another origin", async () => {
    const seen: Array<Record<string, string | undefined>> = [];
    const other = await startLocalServer((req, res) => {
      if (req.url === "/r") {
        res.writeHead(302, { location: "/y" });
        return void res.end();
      }
      seen.push({
        authorization: req.headers.authorization,
        key: req.headers["x-api-key"] as string,
        accept: req.headers.accept,
      });
      res.end("elsewhere");
    });
    const fetcher = new SafeFetcher({ resolve: resolver, policy: new AddressPolicy(["127.0.0.1"]) });
    const headers = { authorization: "Bearer s3cret", "x-api-key": "k3y", accept: "application/json" };
    try {
      const cross = await fetcher.fetchBody(`${server.url}/redirect?to=${encodeURIComponent(`${other.url}/x`)}`, {
        headers,
      });
      expect(cross.body.toString()).toBe("elsewhere");
      expect(seen).toEqual([{ authorization: undefined, key: undefined, accept: "application/json" }]);
      const same = await fetcher.fetchBody(`${other.url}/r`, { headers });
      expect(same.url).toBe(`${other.url}/y`);
      expect(seen[1]).toEqual({ authorization: "Bearer s3cret", key: "k3y", accept: "application/json" });
    } finally {
      await fetcher.close();
      await other.close();
    }
  });

  it("drops credential headers when fetch (the MCP transports' fetch) is redirected to another origin", async () => {
    const seen: Array<Record<string, string | undefined>> = [];
    const other = await startLocalServer((req, res) => {
      seen.push({
        authorization: req.headers.authorization,
        key: req.headers["x-api-key"] as string,
        cookie: req.headers.cookie,
        accept: req.headers.accept,
      });
      res.end("elsewhere");
    });
    const fetcher = new SafeFetcher({ resolve: resolver, policy: new AddressPolicy(["127.0.0.1"]) });
    const headers = { authorization: "Bearer s3cret", "x-api-key": "k3y", cookie: "s=c00kie", accept: "text/plain" };
    // The MCP SDK passes its fetch a global Headers object (its own type, hence the cast); a record too.
    type Init = Parameters<SafeFetcher["fetch"]>[1];
    try {
      for (const given of [{ headers: new Headers(headers) } as unknown as Init, { headers }]) {
        const cross = await fetcher.fetch(`${server.url}/redirect?to=${encodeURIComponent(`${other.url}/x`)}`, given);
        expect(await cross.text()).toBe("elsewhere");
      }
      const dropped = { authorization: undefined, key: undefined, cookie: undefined, accept: "text/plain" };
      expect(seen).toEqual([dropped, dropped]);
      // The same origin keeps them, as a browser's fetch does.
      await (await fetcher.fetch(`${other.url}/y`, { headers })).text();
      expect(seen[2]).toEqual({ authorization: "Bearer s3cret", key: "k3y", cookie: "s=c00kie", accept: "text/plain" });
    } finally {
      await fetcher.close();
      await other.close();
    }
  });

  it("reaches an allowed host:port and still refuses redirects to internal addresses", async () => {
    const fetcher = new SafeFetcher({ resolve: resolver, policy: new AddressPolicy([`127.0.0.1:${server.port}`]) });
    try {
      const ok = await fetcher.fetchBody(`${server.url}/ok`);
      expect(ok.body.toString()).toBe("hello");
      expect(await reason(fetcher, `${server.url}/redirect?to=/ok`)).toBe("fetched");
      for (const target of [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:1/",
        "http://2130706433:1/",
        `http://127.0.0.1:${server.port + 1}/`,
        "http://private.test/",
        "http://metadata.test/",
      ]) {
        expect(await reason(fetcher, `${server.url}/redirect?to=${encodeURIComponent(target)}`)).toBe(
          "blocked-address",
        );
      }
      expect(await reason(fetcher, `${server.url}/chain/2`)).toBe("fetched");
      expect(await reason(fetcher, `${server.url}/chain/3`)).toBe("too-many-redirects");
      expect(await reason(fetcher, `${server.url}/missing`)).toBe("http-404");
      expect(await reason(fetcher, `${server.url}/big`)).toBe("too-large");
    } finally {
      await fetcher.close();
    }
  });

  it("times out a server that never answers", async () => {
    const fetcher = new SafeFetcher({ policy: new AddressPolicy(["127.0.0.1"]), timeoutMs: 300 });
    try {
      expect(await reason(fetcher, `${server.url}/slow`)).toBe("timeout");
    } finally {
      await fetcher.close();
    }
  });

  it("connects to the address it checked, so a rebinding DNS answer is never used", async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => {
      lookups++;
      // First answer public, every later answer loopback: a check-then-connect client would be fooled.
      return [{ address: lookups === 1 ? "192.0.2.1" : "127.0.0.1", family: 4 }];
    };
    const fetcher = new SafeFetcher({
      resolve: rebinding,
      timeoutMs: 1_000,
      policy: new AddressPolicy(["192.0.2.0/24"]),
    });
    const before = hits;
    try {
      const result = await reason(fetcher, `http://rebind.test:${server.port}/ok`);
      expect(["timeout", "unreachable"]).toContain(result);
      expect(lookups).toBe(1);
      expect(hits).toBe(before);
    } finally {
      await fetcher.close();
    }
  });

  it("allows hosts, host:port pairs and CIDR ranges from CONNECTOR_ALLOWED_HOSTS", () => {
    const policy = AddressPolicy.fromEnv("api.internal, cache.internal:6380, 10.0.0.0/8, fd12::/16, 192.168.1.5");
    expect(policy.allowsHost("API.internal", 443)).toBe(true);
    expect(policy.allowsHost("cache.internal", 6380)).toBe(true);
    expect(policy.allowsHost("cache.internal", 6379)).toBe(false);
    expect(policy.allowsAddress("10.200.0.1")).toBe(true);
    expect(policy.allowsAddress("::ffff:10.0.0.1")).toBe(true);
    expect(policy.allowsAddress("fd12::1")).toBe(true);
    expect(policy.allowsAddress("192.168.1.5")).toBe(true);
    expect(policy.allowsAddress("192.168.1.6")).toBe(false);
    expect(policy.allowsAddress("93.184.215.14")).toBe(true);
    expect(() => AddressPolicy.fromEnv("10.0.0.0/99")).toThrow(/CONNECTOR_ALLOWED_HOSTS/);
  });

  it("answers a refusal as a 422 problem carrying the reason", () => {
    const problem = new FetchRefusedError("blocked-address", "127.0.0.1 is not a public address").toProblem();
    expect(problem.status).toBe(422);
    expect(problem.toBody().reason).toBe("blocked-address");
  });
});
