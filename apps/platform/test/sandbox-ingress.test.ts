import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import {
  createSandbox,
  INGRESS_TEST_SERVER,
  requireBwrap,
  requireSandboxNode,
  type SandboxBody,
  type SandboxPlatform,
  startSandboxPlatform,
} from "./sandbox-harness.ts";

const bwrap = requireBwrap();
const node = requireSandboxNode();
const INGRESS = "sbx.localhost";

/** The status and body of a WebSocket handshake answered without an upgrade (it must not open). */
function refusedHandshake(ws: WebSocket): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once("error", reject);
    ws.once("open", () => reject(new Error("opened")));
  });
}

describe.skipIf(!bwrap.available || !node.available)(
  `ingress to exposed sandbox ports through the gateway${bwrap.reason}${node.reason}`,
  () => {
    let h: SandboxPlatform;
    let sbx: SandboxBody;
    let gatewayPort: number;
    let foreignToken: string;
    /** The host of the address the API returned for `port`: what a user copies from the sandbox. */
    let hostOf: (port: number) => string;
    const slug = `web-${randomBytes(3).toString("hex")}`;

    /** A request to the gateway's port with `Host: <host>`, as a browser resolving the ingress name would send. */
    function viaHost(host: string, path: string, token?: string) {
      return new Promise<{ status: number; type: string; retryAfter?: string; body: Record<string, unknown> }>(
        (resolve, reject) => {
          const req = request(
            {
              host: "127.0.0.1",
              port: gatewayPort,
              path,
              headers: { host, ...(token ? { authorization: `Bearer ${token}` } : {}) },
            },
            (res) => {
              let text = "";
              res.on("data", (c) => {
                text += c;
              });
              res.on("end", () =>
                resolve({
                  status: res.statusCode ?? 0,
                  type: String(res.headers["content-type"] ?? ""),
                  ...(res.headers["retry-after"] ? { retryAfter: res.headers["retry-after"] } : {}),
                  body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
                }),
              );
            },
          );
          req.on("error", reject);
          req.end();
        },
      );
    }

    function wsVia(host: string, token?: string): Promise<{ messages: string[]; ws: WebSocket } | { refused: number }> {
      const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/socket`, {
        headers: { host, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
      const messages: string[] = [];
      ws.on("message", (m) => messages.push(m.toString()));
      return new Promise((resolve, reject) => {
        ws.once("open", () => resolve({ messages, ws }));
        ws.once("unexpected-response", (_req, res) => {
          res.resume();
          resolve({ refused: res.statusCode ?? 0 });
        });
        ws.once("error", reject);
      });
    }

    beforeAll(async () => {
      h = await startSandboxPlatform({
        ingressHost: INGRESS,
        env: { SANDBOX_INGRESS_TIMEOUT_MS: "1500", SANDBOX_INGRESS_MAX_CONNECTIONS: "8" },
      });
      gatewayPort = Number(new URL(h.url).port);
      sbx = await createSandbox(h, {
        name: "web",
        slug,
        command: ["node", "-e", INGRESS_TEST_SERVER],
        ports: [
          { port: 8000, visibility: "private" },
          { port: 8001, visibility: "public" },
        ],
      });
      const other = await h.call<{ token: string }>("POST", `/v1/orgs/${h.otherOrgId}/api-tokens`, {
        token: h.ownerToken,
        body: { name: "rival", role: "admin" },
      });
      foreignToken = other.body.token;
      const ports = sbx.ports as { port: number; url: string | null }[];
      hostOf = (port) => new URL(ports.find((p) => p.port === port)?.url ?? "https://missing.invalid").host;
      // The server inside needs a moment to listen.
      await vi.waitFor(
        async () => expect((await viaHost(hostOf(8001), "/")).status, "the server in the sandbox").toBe(200),
        { timeout: 10_000, interval: 100 },
      );
    });
    afterAll(async () => {
      await h?.close();
    });

    it("returns each port's address, and that address reaches that port", async () => {
      expect(sbx.ports).toEqual([
        { port: 8000, visibility: "private", url: `https://8000-${slug}.${INGRESS}` },
        { port: 8001, visibility: "public", url: `https://8001-${slug}.${INGRESS}` },
      ]);
      const listed = await h.call<{ items: SandboxBody[] }>("GET", `/v1/projects/${h.projectId}/sandboxes`);
      expect(listed.body.items.find((x) => x.id === sbx.id)?.ports).toEqual(sbx.ports);
      const pub = await viaHost(hostOf(8001), "/copied");
      expect(pub.body).toMatchObject({ port: 8001, path: "/copied" });
      const priv = await viaHost(hostOf(8000), "/copied", h.adminToken);
      expect(priv.body).toMatchObject({ port: 8000, path: "/copied" });
    });

    it("reaches the first exposed (private) port with a bearer that can read the sandbox", async () => {
      const res = await viaHost(`${slug}.${INGRESS}`, "/hello?x=1", h.adminToken);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ port: 8000, path: "/hello?x=1", host: "127.0.0.1:8000", auth: null });
      const viewer = await viaHost(`${slug}.${INGRESS}:${gatewayPort}`, "/", h.viewerToken);
      expect(viewer.status).toBe(200);
    });

    it("accepts the sandbox's own token on a private port", async () => {
      const created = await h.call<{ token: string }>("POST", `/v1/projects/${h.projectId}/sandbox-tokens`, {
        body: { sandboxId: sbx.id, name: "self" },
      });
      expect((await viaHost(`${slug}.${INGRESS}`, "/", created.body.token)).status).toBe(200);
    });

    it("refuses a private port without a token (401), with a bad token (401), from another organization (404)", async () => {
      const none = await viaHost(`${slug}.${INGRESS}`, "/some/path");
      expect(none.status).toBe(401);
      expect(none.type).toBe("application/problem+json");
      // Like every other problem: the path and the request id.
      expect(none.body).toMatchObject({ instance: "/some/path", requestId: expect.any(String) });
      const missing = await viaHost(`9999-${slug}.${INGRESS}`, "/x", h.adminToken);
      expect(missing.body).toMatchObject({ status: 404, instance: "/x", requestId: expect.any(String) });
      expect((await viaHost(`${slug}.${INGRESS}`, "/", "apl_bad_token")).status).toBe(401);
      // Not found to another organization, with nothing of the project it is in.
      const rival = await viaHost(`${slug}.${INGRESS}`, "/", foreignToken);
      expect(rival.status).toBe(404);
      expect(rival.body).toMatchObject({ detail: `Sandbox ${slug} was not found` });
    });

    it("serves a public port to anyone and picks ports with <port>-<slug>", async () => {
      const open = await viaHost(`8001-${slug}.${INGRESS}`, "/public");
      expect(open.status).toBe(200);
      expect(open.body).toMatchObject({ port: 8001, path: "/public" });
      expect((await viaHost(`8000-${slug}.${INGRESS}`, "/")).status).toBe(401);
      expect((await viaHost(`9999-${slug}.${INGRESS}`, "/", h.adminToken)).status).toBe(404);
      expect((await viaHost(`nope-${slug}.${INGRESS}`, "/", h.adminToken)).status).toBe(404);
    });

    it("relays WebSockets: public without a token, private with one, refused without", async () => {
      const pub = await wsVia(`8001-${slug}.${INGRESS}`);
      if ("refused" in pub) throw new Error(`refused ${pub.refused}`);
      await expect.poll(() => pub.messages).toEqual(["hello from 8001"]);
      pub.ws.send("ping");
      await expect.poll(() => pub.messages).toEqual(["hello from 8001", "echo ping"]);
      pub.ws.terminate();

      const priv = await wsVia(`${slug}.${INGRESS}`, h.adminToken);
      if ("refused" in priv) throw new Error(`refused ${priv.refused}`);
      await expect.poll(() => priv.messages).toEqual(["hello from 8000"]);
      priv.ws.terminate();
      expect(await wsVia(`${slug}.${INGRESS}`)).toEqual({ refused: 401 });
    });

    it("takes a WebSocket's bearer subprotocol as its token and passes the sandbox only the other subprotocols", async () => {
      const bearer = `base64url.bearer.authorization.k8s.io.${Buffer.from(h.adminToken).toString("base64url")}`;
      const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/credentials`, [bearer, "chat"], {
        headers: { host: `${slug}.${INGRESS}` },
      });
      const seen = await refusedHandshake(ws);
      // 403 is the sandbox's own answer: the gateway took the token (a private port) and went on.
      expect(seen.status).toBe(403);
      expect(JSON.parse(seen.body)).toEqual({ protocol: "chat", auth: null, cookie: null });
    });

    it("passes the sandbox no console session cookie (HTTP or WebSocket), and no length for a body it does not get", async () => {
      const cookie = "agentplane_session=aps_a_b; theirs=1; __Host-agentplane_session=aps_c_d";
      const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
        // A GET with a body: the body is not passed on, so neither is its length (the port would wait for it).
        const req = request(
          {
            host: "127.0.0.1",
            port: gatewayPort,
            path: "/",
            headers: { host: hostOf(8001), cookie, "content-length": 5 },
          },
          (res) => {
            let text = "";
            res.on("data", (c) => {
              text += c;
            });
            res.on("end", () => resolve(JSON.parse(text) as Record<string, unknown>));
          },
        );
        req.on("error", reject);
        req.end("hello");
      });
      expect(answer).toMatchObject({ port: 8001, cookie: "theirs=1", length: null });
      const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/credentials`, ["chat"], {
        headers: { host: hostOf(8001), cookie },
      });
      expect(JSON.parse((await refusedHandshake(ws)).body)).toMatchObject({ cookie: "theirs=1" });
    });

    it("lets no sandbox set the console's session cookie through its answers", async () => {
      // Where the console is served from a parent of the ingress host, a sandbox's cookie for that
      // domain would sign the console's users in as whoever the sandbox chose.
      const cookies = await new Promise<string[]>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port: gatewayPort, path: "/set-cookie", headers: { host: hostOf(8001) } },
          (res) => {
            res.resume();
            resolve(res.headers["set-cookie"] ?? []);
          },
        );
        req.on("error", reject);
        req.end();
      });
      expect(cookies).toEqual(["theirs=1; Path=/"]);
    });

    it("keeps a sandbox's cookies on its own host, never the shared ingress domain (HTTP or WebSocket)", async () => {
      // A cookie for the ingress domain would reach every other sandbox's host: one tenant could
      // plant cookies in another's app.
      const own = hostOf(8001);
      const cookies = await new Promise<string[]>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port: gatewayPort, path: "/toss-cookie", headers: { host: own } },
          (res) => {
            res.resume();
            resolve(res.headers["set-cookie"] ?? []);
          },
        );
        req.on("error", reject);
        req.end();
      });
      expect(cookies).toEqual([
        "tossed=1; Path=/",
        "dotted=1; Path=/",
        "parent=1",
        `own=1; Domain=${own}; Path=/`,
        "plain=1; Path=/",
      ]);
      const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/toss-cookie`, { headers: { host: own } });
      ws.on("error", () => {});
      const handshake = await new Promise<string[]>((resolve) =>
        ws.once("upgrade", (res) => resolve(res.headers["set-cookie"] ?? [])),
      );
      expect(handshake).toEqual([
        "tossed=1; Path=/",
        "dotted=1; Path=/",
        "parent=1",
        "own=1; Path=/",
        "plain=1; Path=/",
      ]);
    });

    it("streams a request body into the sandbox as it arrives, never holding it whole", async () => {
      // A public port takes bodies from anyone: the platform passes them on instead of buffering them.
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port: gatewayPort,
            path: "/first-bytes",
            method: "POST",
            headers: { host: hostOf(8001) },
          },
          (res) => {
            let text = "";
            res.on("data", (c) => {
              text += c;
            });
            res.on("end", () => {
              req.destroy();
              resolve({ status: res.statusCode ?? 0, text });
            });
          },
        );
        req.on("error", (err) => (req.destroyed ? undefined : reject(err)));
        // One chunk of a body that has not ended (chunked: no length to wait for).
        req.write(Buffer.alloc(64 * 1024, 1));
        setTimeout(() => reject(new Error("no answer before the body ended")), 5000);
      });
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text).first).toBeGreaterThan(0);
    });

    it("answers 504 naming the port when the sandbox takes a request and never answers", async () => {
      const started = Date.now();
      const res = await viaHost(hostOf(8001), "/never");
      expect(res.status).toBe(504);
      expect(res.type).toBe("application/problem+json");
      expect(res.body.detail).toBe("Port 8001 of the sandbox did not answer within 1.5 s");
      expect(Date.now() - started).toBeLessThan(10_000);
      // A WebSocket handshake the server takes and never answers, the same.
      const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/never`, { headers: { host: hostOf(8001) } });
      const refused = await refusedHandshake(ws);
      expect(refused.status).toBe(504);
      expect(JSON.parse(refused.body).detail).toBe("Port 8001 of the sandbox did not answer within 1.5 s");
    });

    it("holds at most SANDBOX_INGRESS_MAX_CONNECTIONS open to one sandbox: 503 past it, served once they end", async () => {
      // Anyone may open connections to a public port, and each holds a relay process on the host.
      const waiting = Array.from({ length: 8 }, () => viaHost(hostOf(8001), "/never"));
      await vi.waitFor(async () => expect((await viaHost(hostOf(8001), "/")).status).toBe(503), {
        timeout: 5_000,
        interval: 50,
      });
      const refused = await viaHost(hostOf(8000), "/", h.adminToken);
      expect(refused).toMatchObject({ status: 503, type: "application/problem+json", retryAfter: "1" });
      expect(refused.body.detail).toBe(
        `Sandbox ${slug} has 8 connections open through the ingress, its limit; try again when one ends`,
      );
      expect(await wsVia(hostOf(8001))).toEqual({ refused: 503 });
      expect((await Promise.all(waiting)).map((r) => r.status)).toEqual(Array(8).fill(504));
      await vi.waitFor(async () => expect((await viaHost(hostOf(8001), "/")).status).toBe(200), {
        timeout: 5_000,
        interval: 50,
      });
    });

    it("does not touch the API: /v1 paths on an ingress host go to the sandbox", async () => {
      const res = await viaHost(`8001-${slug}.${INGRESS}`, "/v1/auth/me", h.adminToken);
      expect(res.body).toMatchObject({ port: 8001, path: "/v1/auth/me", auth: null });
    });

    it("answers 503 problem while the sandbox is stopped", async () => {
      expect((await h.call("POST", `/v1/projects/${h.projectId}/sandboxes/${sbx.id}/stop`)).status).toBe(200);
      const res = await viaHost(`8001-${slug}.${INGRESS}`, "/");
      expect(res.status).toBe(503);
      expect(res.type).toBe("application/problem+json");
      expect(String(res.body.detail)).toContain("stopped");
      expect(await wsVia(`8001-${slug}.${INGRESS}`)).toEqual({ refused: 503 });
    });
  },
);
