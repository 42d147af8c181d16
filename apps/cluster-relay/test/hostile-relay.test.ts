import type { ServerHttp2Stream } from "node:http2";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import {
  type ConnectionsPlatform,
  startConnectionsPlatform,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { waitForClusterStatus } from "./fixtures/cluster-status.ts";
import { connectHostileRelay, type HostileRelay } from "./fixtures/hostile-relay.ts";

const pg = await requirePostgres();

/** How long the platform gives a relay to answer (CLUSTER_PROXY_TIMEOUT_MS) in this suite. */
const TIMEOUT_MS = 2000;
/** How many requests may be under way on one tunnel (CLUSTER_TUNNEL_MAX_REQUESTS) in this suite. */
const MAX_REQUESTS = 5;

/**
 * Writes to an answer for as long as the platform reads it, as fast as it reads; resolves with
 * the bytes written once the platform has reset the stream.
 */
function endless(stream: ServerHttp2Stream): Promise<number> {
  const chunk = Buffer.alloc(16 * 1024, "x");
  let written = 0;
  return new Promise((resolve) => {
    const more = () => {
      while (!stream.destroyed && !stream.closed) {
        written += chunk.length;
        if (!stream.write(chunk)) return void stream.once("drain", more);
      }
    };
    stream.once("close", () => resolve(written));
    more();
  });
}

/**
 * A relay runs on the customer's infrastructure: whoever holds its tunnel token can answer the
 * platform's requests however they like. Here a relay that verifies nothing and answers as each
 * test makes it, against the whole platform; what it answers must not act on the platform's
 * origin, hold the platform's memory or requests without bound, or speak for the platform.
 */
describe.skipIf(!pg.available)(`a hostile relay${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let clusterId: string;
  let tunnelToken: string;
  let relay: HostileRelay;

  beforeAll(async () => {
    h = await startConnectionsPlatform({
      env: { CLUSTER_PROXY_TIMEOUT_MS: String(TIMEOUT_MS), CLUSTER_TUNNEL_MAX_REQUESTS: String(MAX_REQUESTS) },
    });
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "hostile" },
    });
    clusterId = created.body.id;
    tunnelToken = created.body.tunnelToken;
    relay = await connectHostileRelay({ url: h.url, clusterId, tunnelToken });
    await waitForClusterStatus(h, clusterId, "connected");
  });
  afterAll(async () => {
    relay?.close();
    await h?.close();
  });

  const proxy = (path: string, init: RequestInit = {}) =>
    fetch(`${h.url}/v1/clusters/${clusterId}/proxy${path}`, {
      signal: AbortSignal.timeout(10_000),
      ...init,
      headers: { authorization: `Bearer ${h.memberToken}` },
    });

  /** A second cluster of the project with a hostile relay of its own, answering from its first request. */
  async function anotherCluster(handler: Parameters<typeof connectHostileRelay>[0]["handler"]) {
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: `hostile-${Date.now()}` },
    });
    const other = await connectHostileRelay({
      url: h.url,
      clusterId: created.body.id,
      tunnelToken: created.body.tunnelToken,
      ...(handler ? { handler } : {}),
    });
    return { id: created.body.id, relay: other };
  }

  it("a rotation that does not deliver cuts off the relay holding the tunnel instead of handing it the new token", async () => {
    const hijacked = await anotherCluster(undefined);
    await waitForClusterStatus(h, hijacked.id, "connected");
    const rotated = await h.call<{ tunnelToken: string; deliveredToRelay: boolean }>(
      "POST",
      `/v1/clusters/${hijacked.id}/rotate-tunnel-token?deliver=false`,
      { token: h.adminToken },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.deliveredToRelay).toBe(false);
    // Closed at once, and never sent the new token.
    const closed = await Promise.race([
      hijacked.relay.closed,
      new Promise((r) => setTimeout(() => r("still open"), 3000)),
    ]);
    expect(closed).not.toBe("still open");
    expect(hijacked.relay.requests.map((r) => r.path)).not.toContain("/agentplane/v1/tunnel-token");
    await waitForClusterStatus(h, hijacked.id, "disconnected");
    // Only the new token opens a tunnel again.
    const again = await connectHostileRelay({
      url: h.url,
      clusterId: hijacked.id,
      tunnelToken: rotated.body.tunnelToken,
    });
    await waitForClusterStatus(h, hijacked.id, "connected");
    again.close();
  });

  it("an answer's headers cannot set cookies, clear site data, grant CORS or speak for the platform; a page renders sandboxed", async () => {
    relay.handle((stream) => {
      stream.respond({
        ":status": 200,
        "content-type": "text/html",
        "set-cookie": ["agentplane_session=stolen; Path=/", "other=1"],
        "clear-site-data": '"*"',
        "access-control-allow-origin": "https://evil.example",
        "access-control-allow-credentials": "true",
        "strict-transport-security": "max-age=1",
        "alt-svc": 'h2="evil.example:443"',
        "service-worker-allowed": "/",
        refresh: "0; url=https://evil.example",
        "content-security-policy": "script-src *",
        "x-agentplane-resource-org": h.otherOrgId,
        "audit-id": "kept",
      });
      stream.end("<script>fetch('/v1/auth/me')</script>");
    });
    const res = await proxy("/api/v1/namespaces/default/services/web/proxy/");
    expect(res.status).toBe(200);
    for (const name of [
      "set-cookie",
      "clear-site-data",
      "access-control-allow-origin",
      "access-control-allow-credentials",
      "strict-transport-security",
      "alt-svc",
      "service-worker-allowed",
      "refresh",
      "x-agentplane-resource-org",
    ]) {
      expect(res.headers.get(name), name).toBeNull();
    }
    // Served from the platform's origin, a page from the cluster runs no script there.
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    // The rest passes as it came.
    expect(res.headers.get("content-type")).toBe("text/html");
    expect(res.headers.get("audit-id")).toBe("kept");
    expect(await res.text()).toContain("<script>");
  });

  it("a request reaches the relay without the caller's credentials or the session's CSRF token", async () => {
    relay.handle((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end("{}");
    });
    const res = await fetch(`${h.url}/v1/clusters/${clusterId}/proxy/api/v1/namespaces/default/configmaps`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.memberToken}`,
        "content-type": "application/json",
        "x-csrf-token": "csrf-of-a-session",
        cookie: "other=1",
        "proxy-authorization": "Basic eDp5",
      },
      body: "{}",
    });
    expect(res.status).toBe(200);
    const seen = relay.requests.at(-1)!.headers;
    expect(seen["content-type"]).toBe("application/json");
    for (const name of ["authorization", "x-csrf-token", "cookie", "proxy-authorization"]) {
      expect(seen[name], name).toBeUndefined();
    }
  });

  it("a failure answer that never ends is read no further than its first bytes: 502 at once, the stream reset", async () => {
    let sent: Promise<number> = Promise.resolve(0);
    relay.handle((stream) => {
      stream.respond({
        ":status": 502,
        "content-type": "application/problem+json",
        "x-agentplane-relay-failure": "upstream",
      });
      stream.write('{"detail":"');
      sent = endless(stream);
    });
    // A watch: no deadline of its own, so nothing but the read's bound ends it.
    const res = await proxy("/api/v1/pods?watch=true");
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await sent).toBeLessThan(4 * 1024 * 1024);
  });

  it("a failure answer that stops short is given up at the deadline: 502", async () => {
    relay.handle((stream) => {
      stream.respond({ ":status": 502, "x-agentplane-relay-failure": "upstream" });
      stream.write('{"detail":"');
    });
    const started = Date.now();
    const res = await proxy("/api/v1/pods?watch=true");
    expect(res.status).toBe(502);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1500);
  });

  it("a watch whose head never comes is a 504 at the deadline; one answered may then be silent for longer", async () => {
    relay.handle(() => {});
    const started = Date.now();
    const unanswered = await proxy("/api/v1/pods?watch=true");
    expect(unanswered.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1500);
    expect(((await unanswered.json()) as { type: string }).type).toMatch(/gateway-timeout$/);

    relay.handle((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.write('{"type":"ADDED"}\n');
      setTimeout(() => stream.end('{"type":"MODIFIED"}\n'), TIMEOUT_MS + 500);
    });
    const answered = await proxy("/api/v1/pods?watch=true");
    expect(answered.status).toBe(200);
    expect(await answered.text()).toBe('{"type":"ADDED"}\n{"type":"MODIFIED"}\n');
  });

  it("server push is refused: a relay cannot open streams of its own on the platform's side", async () => {
    let pushed: Promise<string> = Promise.resolve("not tried");
    relay.handle((stream) => {
      pushed = new Promise((resolve) => {
        try {
          stream.pushStream({ ":path": "/api/v1/namespaces" }, (err, push) => {
            if (err) return resolve("refused");
            push.on("error", () => {});
            push.respond({ ":status": 200 });
            push.write(Buffer.alloc(60 * 1024));
            // Accepted and never read: it would stay open, holding its bytes, as long as the tunnel.
            const open = setTimeout(() => resolve("open"), 1000);
            push.once("close", () => {
              clearTimeout(open);
              resolve("refused");
            });
          });
        } catch {
          resolve("refused");
        }
      });
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end("{}");
    });
    const res = await proxy("/api/v1/namespaces");
    expect(res.status).toBe(200);
    await res.text();
    expect(await pushed).toBe("refused");
  });

  it("a WebSocket message far larger than HTTP/2 ever writes ends the tunnel as soon as its length is read", async () => {
    const other = await anotherCluster(undefined);
    try {
      await waitForClusterStatus(h, other.id, "connected");
      // A binary frame declaring 64 MiB (masked, as a client's must be), and then only a little of it.
      const head = Buffer.alloc(14);
      head[0] = 0x82;
      head[1] = 0x80 | 127;
      head.writeBigUInt64BE(64n * 1024n * 1024n, 2);
      const socket = (other.relay.ws as unknown as { _socket: import("node:net").Socket })._socket;
      socket.write(Buffer.concat([head, Buffer.alloc(1024)]));
      const closed = await Promise.race([
        other.relay.closed,
        new Promise((r) => setTimeout(() => r("still open"), 2000)),
      ]);
      expect(closed).toEqual({ code: 1009 });
    } finally {
      other.relay.close();
    }
  });

  it("a tunnel path whose cluster id is not percent-decodable is a 400 problem, as a plain request's, not a 500", async () => {
    const answer = await new Promise<{ status: number; type: string }>((resolve, reject) => {
      const ws = new WebSocket(`${h.url.replace(/^http/, "ws")}/v1/clusters/%E0%A4%A/tunnel`, {
        headers: { authorization: `Bearer ${tunnelToken}` },
      });
      ws.on("unexpected-response", (_req, res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"] ?? "" }));
      });
      ws.on("open", () => reject(new Error("a tunnel opened")));
      ws.on("error", () => {});
    });
    expect(answer).toEqual({ status: 400, type: "application/problem+json" });
  });

  it("a tunnel carries a bounded number of requests at once: one more is a 429 until one ends", async () => {
    // Watches the relay begins and never ends: each holds its stream for as long as its caller reads.
    relay.handle((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.write('{"type":"ADDED"}\n');
    });
    const callers = Array.from({ length: MAX_REQUESTS }, () => new AbortController());
    const watches = await Promise.all(
      callers.map((caller) => proxy("/api/v1/configmaps?watch=true", { signal: caller.signal })),
    );
    try {
      expect(watches.map((w) => w.status)).toEqual(callers.map(() => 200));
      const refused = await proxy("/api/v1/namespaces");
      expect(refused.status).toBe(429);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(relay.requests.at(-1)?.path).toBe("/api/v1/configmaps?watch=true");

      callers[0]!.abort();
      relay.handle((stream) => {
        stream.respond({ ":status": 200, "content-type": "application/json" });
        stream.end("{}");
      });
      const res = await waitFor(async () => {
        const r = await proxy("/api/v1/namespaces");
        return r.status === 200 ? r : void (await r.body?.cancel());
      }, 5000);
      expect(await res.json()).toEqual({});
    } finally {
      for (const caller of callers) caller.abort();
    }
  });

  it("a status answer that never ends is read no further than its first bytes", async () => {
    let sent: Promise<number> | undefined;
    const started = Date.now();
    const other = await anotherCluster((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.write('{"relayVersion":"');
      sent = endless(stream);
    });
    try {
      await waitForClusterStatus(h, other.id, "connected");
      const written = await (async () => {
        while (!sent) await new Promise((r) => setTimeout(r, 20));
        return sent;
      })();
      // Well before the request's deadline, and after no more than a few buffers' worth.
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
      expect(written).toBeLessThan(4 * 1024 * 1024);
    } finally {
      other.relay.close();
    }
  });
});
