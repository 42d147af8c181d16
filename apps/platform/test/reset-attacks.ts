import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

/** What a hostile client targets: a running platform, a token, a running sandbox and its ingress host. */
export interface AttackTarget {
  /** `http://host:port` of the gateway (or of a service, for the direct attacks). */
  url: string;
  token: string;
  projectId: string;
  sandboxId: string;
  /** `<slug>.<ingress host>`, when ingress is configured. */
  ingressHost?: string;
}

export interface Attack {
  name: string;
  /** The bytes sent before the reset (a request cut short, or a whole one). */
  send: string | Buffer;
  /** Reset only once the response begins with this (e.g. `HTTP/1.1 101`); otherwise right after sending. */
  after?: RegExp;
  /** Bytes sent after `after` matched (a WebSocket frame cut in half), before the reset. */
  andThen?: Buffer;
}

function upgradeRequest(path: string, host: string, extra: string[] = []): string {
  return [
    `GET ${path} HTTP/1.1`,
    `Host: ${host}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`,
    "Sec-WebSocket-Version: 13",
    ...extra,
    "",
    "",
  ].join("\r\n");
}

function bearerProtocol(token: string): string {
  return `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString("base64url")}`;
}

/** The first bytes of a masked binary WebSocket frame that announces more payload than it sends. */
function halfFrame(): Buffer {
  const mask = randomBytes(4);
  const payload = Buffer.from([0, ...Buffer.from("partial stdin")]);
  for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
  return Buffer.concat([Buffer.from([0x82, 0x80 | 100]), mask, payload]);
}

/** Every kind of route: plain, upgrade refused, upgrade accepted, ingress, and an exec cut mid-stream. */
export function attacksOn(target: AttackTarget): Attack[] {
  const host = new URL(target.url).host;
  const exec = `/v1/projects/${target.projectId}/sandboxes/${target.sandboxId}/exec?command=cat`;
  const attacks: Attack[] = [
    { name: "plain request, headers cut short", send: `GET /v1/auth/me HTTP/1.1\r\nHost: ${host}\r\nAuthor` },
    {
      name: "plain POST, body cut short",
      send: `POST /v1/orgs HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${target.token}\r\ncontent-type: application/json\r\ncontent-length: 5000\r\n\r\n{"name":"`,
    },
    {
      name: "chunked POST, reset between chunks",
      send: `POST /v1/orgs HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${target.token}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"nam\r\n`,
    },
    { name: "plain request, reset while answering", send: `GET /v1/openapi.json HTTP/1.1\r\nHost: ${host}\r\n\r\n` },
    { name: "upgrade on an unknown path, no token", send: upgradeRequest("/nope", host) },
    {
      name: "upgrade on exec, no token",
      send: upgradeRequest(exec, host, ["Sec-WebSocket-Protocol: v5.channel.k8s.io"]),
    },
    {
      name: "upgrade on exec, cut inside the headers",
      send: upgradeRequest(exec, host).slice(0, 80),
    },
    {
      name: "exec accepted, reset mid-stream",
      send: upgradeRequest(exec, host, [`Sec-WebSocket-Protocol: v5.channel.k8s.io, ${bearerProtocol(target.token)}`]),
      after: /^HTTP\/1\.1 101/,
      andThen: halfFrame(),
    },
    {
      name: "exec accepted, reset at once",
      send: upgradeRequest(exec, host, [
        `Authorization: Bearer ${target.token}`,
        "Sec-WebSocket-Protocol: v4.channel.k8s.io",
      ]),
      after: /^HTTP\/1\.1 101/,
    },
  ];
  if (target.ingressHost) {
    const ingress = target.ingressHost;
    attacks.push(
      { name: "ingress request, cut short", send: `GET / HTTP/1.1\r\nHost: ${ingress}\r\nx-a` },
      { name: "ingress request, reset while proxied", send: `GET /slow HTTP/1.1\r\nHost: ${ingress}\r\n\r\n` },
      {
        name: "ingress POST, body cut short",
        send: `POST / HTTP/1.1\r\nHost: ${ingress}\r\ncontent-length: 1000\r\n\r\nabc`,
      },
      { name: "ingress upgrade, reset", send: upgradeRequest("/ws", ingress) },
      {
        name: "ingress upgrade with a token, reset",
        send: upgradeRequest("/ws", ingress, [`Authorization: Bearer ${target.token}`]),
      },
    );
  }
  return attacks;
}

/**
 * Opens a connection, sends the attack's bytes and resets it (RST, not FIN). Resolves with what
 * the server answered when the attack waited for a response (`after`) that never came.
 */
export async function runAttack(url: string, attack: Attack, timeoutMs = 15_000): Promise<string | undefined> {
  let reached = !attack.after;
  let seen = "";
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  // Our own side of the reset reports ECONNRESET too; only the server's survival matters.
  socket.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.write(attack.send);
  if (attack.after) {
    const pattern = attack.after;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      const onData = (chunk: Buffer) => {
        seen += chunk.toString("latin1");
        if (pattern.test(seen)) {
          reached = true;
          clearTimeout(timer);
          socket.off("data", onData);
          resolve();
        }
      };
      socket.on("data", onData);
      socket.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (attack.andThen && !socket.destroyed) socket.write(attack.andThen);
  } else {
    // Give the server a moment to start working on what it got.
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 10));
  if (!socket.destroyed) socket.resetAndDestroy();
  return reached ? undefined : `${attack.name}: ${seen.slice(0, 300) || "(no answer)"}`;
}

/**
 * Runs every attack once in turn, then `rounds` times all at once. Resolves with the names of the
 * attacks that never got the response they wait for on their first run (an accepted upgrade that
 * was refused would test less than it claims).
 */
export async function runAttacks(url: string, attacks: Attack[], rounds = 3): Promise<string[]> {
  const missed: string[] = [];
  for (const attack of attacks) {
    const miss = await runAttack(url, attack);
    if (miss) missed.push(miss);
  }
  for (let i = 0; i < rounds; i++) await Promise.all(attacks.map((a) => runAttack(url, a)));
  return missed;
}

/**
 * The sandbox's server for the ingress attacks (run without isolation, so on a free host port):
 * `/slow` answers after a second, an upgrade is accepted and then left open.
 */
export function slowServer(port: number): string {
  return `
const http = require("http");
const server = http.createServer((req, res) => {
  req.resume();
  if (req.url === "/slow") return setTimeout(() => res.end("late"), 1000);
  res.end("ok");
});
server.on("upgrade", (req, socket) => {
  socket.on("error", () => {});
  socket.write("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n");
});
server.listen(${port}, "127.0.0.1");
`;
}
