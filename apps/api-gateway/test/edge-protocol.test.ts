import { connect } from "node:net";
import { INTERNAL_IDENTITY_HEADER } from "@agentplane/contracts";
import { createServiceApp, generateInternalKeys, serveFetch } from "@agentplane/service-kit";
import { type LocalServer, startLocalServer } from "@agentplane/testkit";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OidcVerifier } from "../src/authn/oidc.ts";
import { type Harness, startHarness } from "./harness.ts";

const MiB = 1024 * 1024;

/** A body of `size` bytes sent with chunked transfer encoding (no Content-Length). */
function chunked(size: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const n = Math.min(chunk, size - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x61));
    },
  });
}

function postChunked(url: string, size: number, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: chunked(size),
    duplex: "half",
  } as RequestInit);
}

/** Raw HTTP/1.1 over TCP: what the server answers to exactly these bytes (first 2 KiB). */
function raw(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let seen = "";
    socket.on("data", (c: Buffer) => {
      seen += c.toString("latin1");
      if (seen.includes("\r\n\r\n")) {
        socket.destroy();
        resolve(seen.slice(0, 2048));
      }
    });
    socket.on("error", reject);
  });
}

describe("gateway edge: protocol details, tokens and streamed body limits", () => {
  let h: Harness;
  const received: { bytes: number; identity: boolean }[] = [];
  const upgrades: { identity: boolean; protocol: string | undefined }[] = [];

  beforeAll(async () => {
    h = await startHarness({
      extraTargets: {
        // A stand-in audit service that counts what it was sent.
        audit: {
          fetch: async (request) => {
            const bytes = (await request.arrayBuffer()).byteLength;
            received.push({ bytes, identity: request.headers.has(INTERNAL_IDENTITY_HEADER) });
            return Response.json({ bytes }, { status: 201 });
          },
          ready: async () => true,
        },
        // A stand-in sandbox service that accepts every WebSocket upgrade it is handed.
        sandbox: {
          fetch: async () => new Response(null, { status: 204 }),
          upgrade: {
            kind: "in-process",
            handle: (req, socket) => {
              upgrades.push({
                identity: typeof req.headers[INTERNAL_IDENTITY_HEADER] === "string",
                protocol: req.headers["sec-websocket-protocol"] as string | undefined,
              });
              socket.end("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
            },
          },
          ready: async () => true,
        },
      },
    });
  });
  afterAll(() => h.close());

  it("answers 426 problem with Upgrade: websocket for the exec endpoint reached without an upgrade", async () => {
    const res = await fetch(`${h.url}/v1/projects/prj_x/sandboxes/sbx_y/exec?command=ls`, {
      headers: { authorization: `Bearer ${h.ownerToken}` },
    });
    expect(res.status).toBe(426);
    expect(res.headers.get("upgrade")).toBe("websocket");
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(((await res.json()) as { type: string }).type).toMatch(/upgrade-required$/);
  });

  it("takes a bearer token from Sec-WebSocket-Protocol on an upgrade only, never on plain HTTP", async () => {
    const protocol = `base64url.bearer.authorization.k8s.io.${Buffer.from(h.ownerToken).toString("base64url")}`;
    const plain = await fetch(`${h.url}/v1/auth/me`, { headers: { "sec-websocket-protocol": protocol } });
    expect(plain.status).toBe(401);
    expect((await fetch(`${h.url}/v1/auth/me`, { headers: { authorization: `Bearer ${h.ownerToken}` } })).status).toBe(
      200,
    );

    const upgrade = (protocols: string) =>
      raw(
        h.url,
        [
          "GET /v1/projects/prj_x/sandboxes/sbx_y/exec?command=ls HTTP/1.1",
          `Host: ${new URL(h.url).host}`,
          "Upgrade: websocket",
          "Connection: Upgrade",
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
          "Sec-WebSocket-Version: 13",
          `Sec-WebSocket-Protocol: ${protocols}`,
          "",
          "",
        ].join("\r\n"),
      );
    expect(await upgrade(`v5.channel.k8s.io, ${protocol}`)).toMatch(/^HTTP\/1\.1 101/);
    // The service sees the signed identity and the channel protocol, never the credential.
    expect(upgrades.at(-1)).toEqual({ identity: true, protocol: "v5.channel.k8s.io" });
    expect(await upgrade("v5.channel.k8s.io")).toMatch(/^HTTP\/1\.1 401/);
  });

  it("counts a chunked body as it streams: 413 problem past 1 MiB, passed through below", async () => {
    const path = "/v1/orgs/org_x/spending-limits";
    const auth = { authorization: `Bearer ${h.ownerToken}` };
    const small = await postChunked(`${h.url}${path}`, 512 * 1024, auth);
    expect(small.status).toBe(201);
    expect(await small.json()).toEqual({ bytes: 512 * 1024 });

    const before = received.length;
    const big = await postChunked(`${h.url}${path}`, 10 * MiB, auth);
    expect(big.status).toBe(413);
    expect(big.headers.get("content-type")).toBe("application/problem+json");
    expect(((await big.json()) as { type: string }).type).toMatch(/payload-too-large$/);
    // The service never got a whole 10 MiB body.
    expect(received.slice(before).every((r) => r.bytes <= MiB)).toBe(true);
  });
  it("forwards a small declared body whole, and never forwards one the client cut short", async () => {
    const path = "/v1/orgs/org_x/spending-limits";
    const body = JSON.stringify({ pad: "x".repeat(40 * 1024) });
    const whole = await fetch(`${h.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.ownerToken}`, "content-type": "application/json" },
      body,
    });
    expect(whole.status).toBe(201);
    expect(await whole.json()).toEqual({ bytes: Buffer.byteLength(body) });

    // Declares 100 bytes, sends 10 and closes its side: nothing reaches the service.
    const before = received.length;
    const { hostname, port } = new URL(h.url);
    /** A raw POST of `path` with its declared length and the first part of its body. */
    const head = (length: number, first: string, extra: string[] = []) =>
      [
        `POST ${path} HTTP/1.1`,
        `Host: ${hostname}:${port}`,
        `Authorization: Bearer ${h.ownerToken}`,
        "Content-Type: application/json",
        `Content-Length: ${length}`,
        ...extra,
        "",
        first,
      ].join("\r\n");
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(head(100, '{"pad":"x"'));
        socket.end();
      });
      socket.on("data", () => {});
      socket.on("error", () => resolve());
      socket.on("close", () => resolve());
    });
    expect(received.length).toBe(before);

    // A small body whose bytes come in two parts, the second well after the headers: forwarded
    // whole once it is all there.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(head(16, '{"pad":', ["Connection: close"]));
        setTimeout(() => socket.write('"abcdef"}'), 50);
      });
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk;
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 201/);
    expect(answer).toContain('{"bytes":16}');
    expect(received.at(-1)?.bytes).toBe(16);
    // The gateway is still answering.
    const after = await fetch(`${h.url}/v1/auth/me`, { headers: { authorization: `Bearer ${h.ownerToken}` } });
    expect(after.status).toBe(200);
  });
});

describe("service apps count streamed bytes against their body limit", () => {
  it("answers 413 problem for a chunked body past 1 MiB and accepts one below", async () => {
    const app = createServiceApp({ name: "tenancy", keys: await generateInternalKeys() });
    app.post("/echo", async (c) => c.json({ size: (await c.req.arrayBuffer()).byteLength }));
    const server = await serveFetch(app.fetch, { port: 0, hostname: "127.0.0.1" });
    try {
      const ok = await postChunked(`${server.url}/echo`, 256 * 1024);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ size: 256 * 1024 });
      const big = await postChunked(`${server.url}/echo`, 10 * MiB);
      expect(big.status).toBe(413);
      expect(big.headers.get("content-type")).toBe("application/problem+json");
    } finally {
      await server.close();
    }
  });
});

describe("OIDC tokens issued in the future", () => {
  let idp: LocalServer;
  let issuer = "";
  let key: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

  beforeAll(async () => {
    const pair = await generateKeyPair("ES256", { extractable: true });
    key = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256" };
    idp = await startLocalServer((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/.well-known/openid-configuration")
        res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      else res.end(JSON.stringify({ keys: [jwk] }));
    });
    issuer = idp.url;
  });
  afterAll(() => idp.close());

  const issuedIn = (seconds: number) =>
    new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(issuer)
      .setSubject("user-1")
      .setIssuedAt(Math.floor(Date.now() / 1000) + seconds)
      .setExpirationTime("10m")
      .sign(key);

  it("accepts an iat within the clock skew and refuses one beyond it (60 s by default, configurable)", async () => {
    const verifier = new OidcVerifier({ issuer });
    expect((await verifier.verify(await issuedIn(30))).sub).toBe("user-1");
    await expect(verifier.verify(await issuedIn(120))).rejects.toThrow(/iat/);
    await expect(verifier.verify(await issuedIn(3600))).rejects.toThrow(/iat/);
    const strict = new OidcVerifier({ issuer, maxClockSkewSeconds: 10 });
    await expect(strict.verify(await issuedIn(30))).rejects.toThrow(/iat/);
    expect((await strict.verify(await issuedIn(-30))).sub).toBe("user-1");
  });
});
