import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { INTERNAL_IDENTITY_HEADER, RESOURCE_ORG_HEADER, SANDBOX_INGRESS_HEADER } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import type { GatewayTarget } from "../src/deps.ts";
import { type Harness, startHarness } from "./harness.ts";

const EXEC_PATH = "/v1/projects/prj_x/sandboxes/sbx_x/exec";

/**
 * A stand-in upstream service: echoes WebSocket messages, reports the headers it received, and
 * streams a response in timed chunks. Reached in process or over HTTP, like a real service.
 */
function upstream() {
  const seen: { identity?: string; authorization?: string; protocol?: string; ingress?: string | null }[] = [];
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => [...protocols][0] ?? false });
  wss.on("connection", (socket, req: IncomingMessage) => {
    seen.push({
      identity: req.headers[INTERNAL_IDENTITY_HEADER] as string | undefined,
      authorization: req.headers.authorization,
      protocol: socket.protocol,
      ingress: req.headers[SANDBOX_INGRESS_HEADER] as string | undefined,
    });
    socket.on("message", (data, binary) => socket.send(data, { binary }));
  });
  const handleUpgrade = (req: IncomingMessage, socket: import("node:stream").Duplex, head: Buffer) =>
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  const fetch = async (request: Request): Promise<Response> => {
    if (request.headers.get("x-answer") === "ingress") {
      return Response.json({ ingress: request.headers.get(SANDBOX_INGRESS_HEADER) });
    }
    if (request.headers.get("x-answer") === "cookies") {
      // Two cookies and the organization a service names for the gateway's audit record.
      const headers = new Headers({ "content-type": "application/json", [RESOURCE_ORG_HEADER]: "org_named" });
      headers.append("set-cookie", "a=1; Path=/; HttpOnly");
      headers.append("set-cookie", "b=2; Path=/");
      return new Response(JSON.stringify({ ok: true }), { headers });
    }
    const received = request.body ? (await request.arrayBuffer()).byteLength : 0;
    let n = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (n === 3) return controller.close();
        await new Promise((r) => setTimeout(r, 300));
        controller.enqueue(new TextEncoder().encode(`chunk ${n++} of ${received}\n`));
      },
    });
    return new Response(stream, { headers: { "content-type": "text/plain" } });
  };
  return { seen, handleUpgrade, fetch };
}

function connect(url: string, protocols: string[], headers: Record<string, string> = {}) {
  return new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

function echo(ws: WebSocket, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    ws.once("message", (data) => resolve(data as Buffer));
    ws.send(payload);
  });
}

for (const mode of ["in-process", "http"] as const) {
  describe(`pass-through to a service (${mode})`, () => {
    let h: Harness;
    let server: Server | undefined;
    const up = upstream();

    beforeAll(async () => {
      let target: GatewayTarget;
      if (mode === "in-process") {
        target = {
          fetch: up.fetch,
          upgrade: { kind: "in-process", handle: up.handleUpgrade },
          ready: async () => true,
        };
      } else {
        server = createServer(async (req, res) => {
          const chunks: Buffer[] = [];
          for await (const c of req) chunks.push(c as Buffer);
          const response = await up.fetch(
            new Request(`http://x${req.url}`, {
              method: req.method!,
              headers: {
                ...(req.headers["x-answer"] ? { "x-answer": String(req.headers["x-answer"]) } : {}),
                ...(req.headers[SANDBOX_INGRESS_HEADER]
                  ? { [SANDBOX_INGRESS_HEADER]: String(req.headers[SANDBOX_INGRESS_HEADER]) }
                  : {}),
              },
              body: req.method === "GET" ? null : Buffer.concat(chunks),
            }),
          );
          for (const [name, value] of response.headers) if (name !== "set-cookie") res.setHeader(name, value);
          const cookies = response.headers.getSetCookie();
          if (cookies.length > 0) res.setHeader("set-cookie", cookies);
          res.writeHead(response.status);
          for await (const chunk of response.body!) res.write(chunk);
          res.end();
        });
        server.on("upgrade", up.handleUpgrade);
        await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const { httpFetch } = await import("@agentplane/service-kit");
        target = { fetch: httpFetch(url), upgrade: { kind: "http", url }, ready: async () => true };
      }
      h = await startHarness({ extraTargets: { sandbox: target } });
    });
    afterAll(async () => {
      await h.close();
      server?.closeAllConnections();
      server?.close();
    });

    it("streams the response body as it is produced", async () => {
      const started = Date.now();
      const res = await fetch(`${h.url}/v1/shell/exec`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.ownerToken}`, "content-type": "application/json" },
        body: JSON.stringify({ pad: "y".repeat(5000) }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      const firstAt = Date.now() - started;
      let text = new TextDecoder().decode(first.value);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      const total = Date.now() - started;
      expect(text).toContain("chunk 2 of");
      expect(text).toMatch(/of 50\d\d/);
      // The first chunk arrived well before the last one was produced (no buffering).
      expect(total - firstAt).toBeGreaterThanOrEqual(450);
    });

    it("answers with every header of the service's answer, repeated ones too, less the organization it named", async () => {
      const res = await fetch(`${h.url}/v1/shell/exec`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.ownerToken}`, "content-type": "application/json", "x-answer": "cookies" },
        body: "{}",
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
      expect(res.headers.getSetCookie()).toEqual(["a=1; Path=/; HttpOnly", "b=2; Path=/"]);
      expect(res.headers.get(RESOURCE_ORG_HEADER)).toBeNull();
      expect(res.headers.get("x-request-id")).toMatch(/\S/);
      expect(res.headers.get("ratelimit")).toMatch(/^"per-token";r=\d+;t=\d+, "per-user";r=\d+;t=\d+$/);
    });

    it("passes WebSocket upgrades through with the internal identity, never the bearer token", async () => {
      const ws = await connect(`${h.url.replace("http", "ws")}${EXEC_PATH}`, ["v5.channel.k8s.io"], {
        authorization: `Bearer ${h.ownerToken}`,
      });
      const reply = await echo(ws, Buffer.from([1, 104, 105]));
      expect([...reply]).toEqual([1, 104, 105]);
      ws.close();
      const last = up.seen.at(-1)!;
      expect(last.identity).toBeTruthy();
      expect(last.authorization).toBeUndefined();
      expect(last.protocol).toBe("v5.channel.k8s.io");
    });

    it("accepts the token as the Kubernetes bearer subprotocol and does not forward it", async () => {
      const encoded = Buffer.from(h.ownerToken).toString("base64url");
      const ws = await connect(`${h.url.replace("http", "ws")}${EXEC_PATH}`, [
        "v4.channel.k8s.io",
        `base64url.bearer.authorization.k8s.io.${encoded}`,
      ]);
      expect([...(await echo(ws, Buffer.from([0, 1])))]).toEqual([0, 1]);
      ws.close();
      expect(up.seen.at(-1)!.protocol).toBe("v4.channel.k8s.io");
    });

    it("never passes a caller's ingress target header on to the service (it would serve a sandbox port instead)", async () => {
      const res = await fetch(`${h.url}/v1/shell/exec`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${h.ownerToken}`,
          "content-type": "application/json",
          "x-answer": "ingress",
          [SANDBOX_INGRESS_HEADER]: "victim:8000",
        },
        body: "{}",
      });
      expect(await res.json()).toEqual({ ingress: null });
      const ws = await connect(`${h.url.replace("http", "ws")}${EXEC_PATH}`, ["v5.channel.k8s.io"], {
        authorization: `Bearer ${h.ownerToken}`,
        [SANDBOX_INGRESS_HEADER]: "victim:8000",
      });
      ws.close();
      expect(up.seen.at(-1)!.ingress).toBeUndefined();
    });

    it("refuses an upgrade without a valid token with 401", async () => {
      await expect(connect(`${h.url.replace("http", "ws")}${EXEC_PATH}`, ["v5.channel.k8s.io"])).rejects.toThrow(
        /status 401/,
      );
    });
  });
}
