import http2 from "node:http2";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectionsPlatform,
  startConnectionsPlatform,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { waitForClusterStatus } from "./fixtures/cluster-status.ts";
import { connectHostileRelay, type HostileRelay } from "./fixtures/hostile-relay.ts";

const pg = await requirePostgres();

const STATUS_PATH = "/agentplane/v1/status";

/**
 * A request caught on a tunnel while it is replaced (a rotated token: the relay opens the new
 * tunnel, the platform registers it and closes the old one). The platform's GOAWAY on the old
 * session can leave ahead of a stream it had already queued there, and the relay's HTTP/2 server
 * then refuses that stream unprocessed (REFUSED_STREAM). Such a request is sent again down the new
 * tunnel; one the relay failed after taking it up is a problem naming the cause, never a 500.
 */
describe.skipIf(!pg.available)(`requests on a tunnel being replaced${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  const relays: HostileRelay[] = [];

  beforeAll(async () => {
    h = await startConnectionsPlatform();
  });
  afterAll(async () => {
    for (const relay of relays) relay.close();
    await h?.close();
  });

  async function cluster(name: string, handler?: Parameters<typeof connectHostileRelay>[0]["handler"]) {
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name },
    });
    expect(created.status).toBe(201);
    const { id, tunnelToken } = created.body;
    const relay = await connectHostileRelay({
      url: h.url,
      clusterId: id,
      tunnelToken,
      ...(handler ? { handler } : {}),
    });
    relays.push(relay);
    await waitForClusterStatus(h, id, "connected");
    return { id, tunnelToken, relay };
  }

  const proxy = (clusterId: string, path: string) =>
    h.call(`GET`, `/v1/clusters/${clusterId}/proxy${path}`, { token: h.memberToken });

  /** The status request the platform sends down a tunnel once it has registered it as the cluster's. */
  const registered = (relay: HostileRelay) => relay.requests.some((r) => r.path === STATUS_PATH);

  it("a request the replaced tunnel refuses unprocessed goes down the new tunnel", async () => {
    const { id, tunnelToken, relay: old } = await cluster("refused-while-replaced");
    let replacement: HostileRelay | undefined;
    old.handle((stream, headers) => {
      if (headers[":path"] === STATUS_PATH) {
        stream.respond({ ":status": 200, "content-type": "application/json" });
        stream.end("{}");
        return;
      }
      // The relay dials its new tunnel; once the platform has registered it, the request on the old
      // one is refused as the relay's HTTP/2 server refuses a stream arriving after a GOAWAY.
      void (async () => {
        replacement = await connectHostileRelay({
          url: h.url,
          clusterId: id,
          tunnelToken,
          handler: (s) => {
            s.respond({ ":status": 200, "content-type": "application/json" });
            s.end('{"tunnel":"new"}');
          },
        });
        relays.push(replacement);
        await waitFor(() => registered(replacement!), 10_000, "the new tunnel to be registered");
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      })();
    });
    const res = await proxy(id, "/api/v1/namespaces");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tunnel: "new" });
    expect(old.requests.filter((r) => r.path === "/api/v1/namespaces")).toHaveLength(1);
    expect(replacement?.requests.filter((r) => r.path === "/api/v1/namespaces")).toHaveLength(1);
  });

  /** A relay that answers the platform's status checks and resets every other stream with `code`. */
  const resettingWith = (code: number) => (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    if (headers[":path"] === STATUS_PATH) {
      stream.respond({ ":status": 200 });
      stream.end("{}");
      return;
    }
    stream.close(code);
  };

  it("refused unprocessed with no tunnel to take it over: 503 cluster-disconnected naming the refusal", async () => {
    const { id } = await cluster("refused-alone", resettingWith(http2.constants.NGHTTP2_REFUSED_STREAM));
    const res = await proxy(id, "/api/v1/namespaces");
    expect(res.status).toBe(503);
    expect(String(res.body.type)).toMatch(/cluster-disconnected$/);
    expect(String(res.body.detail)).toContain("REFUSED_STREAM");
  });

  it("a stream the relay resets with an error after taking it up is a 502 naming the error, not a 500", async () => {
    const { id } = await cluster("reset-after-taken-up", resettingWith(http2.constants.NGHTTP2_INTERNAL_ERROR));
    const res = await proxy(id, "/api/v1/namespaces");
    expect(res.status).toBe(502);
    expect(String(res.body.type)).toMatch(/bad-gateway$/);
    expect(String(res.body.detail)).toContain("NGHTTP2_INTERNAL_ERROR");
  });
});
