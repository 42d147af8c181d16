import { once } from "node:events";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { ConfigError, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configFromEnv } from "../src/config.ts";
import { AttemptBucket } from "../src/egress/bounds.ts";
import { EgressProxy } from "../src/egress/proxy.ts";

const IDLE_MS = 400;

/** Upstreams speaking plain TCP: `echo` answers what it gets, `sink` only reads, `source` writes every 100 ms. */
interface Upstream {
  server: Server;
  sockets: Socket[];
  port: number;
}

async function tcpUpstream(handle: (s: Socket) => void): Promise<Upstream> {
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.on("error", () => {});
    handle(s);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, sockets, port: (server.address() as AddressInfo).port };
}

/** Connects to a sandbox's proxy socket and sends `head`; resolves with the socket and the answer's head. */
async function ask(path: string, head: string): Promise<{ socket: Socket; answer: string }> {
  const socket = connect(path);
  socket.on("error", () => {});
  socket.write(head);
  let got = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      got += chunk.toString("latin1");
      if (got.includes("\r\n\r\n")) {
        socket.off("data", onData);
        resolve();
      }
    };
    socket.on("data", onData);
    socket.once("close", () => reject(new Error(`closed after ${JSON.stringify(got)}`)));
  });
  return { socket, answer: got };
}

const tunnel = (path: string, authority: string) =>
  ask(path, `CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`);

/** Resolves when the socket has been ended by its peer (a FIN) and closed. */
function ended(socket: Socket): Promise<"end"> {
  return new Promise((resolve) => {
    if (socket.readableEnded) resolve("end");
    socket.once("end", () => resolve("end"));
    socket.resume();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("egress idle timeout", () => {
  let echo: Upstream;
  let sink: Upstream;
  let source: Upstream;
  let http: HttpServer;
  let proxy: EgressProxy;
  let path: string;
  const timers: NodeJS.Timeout[] = [];

  beforeAll(async () => {
    echo = await tcpUpstream((s) => s.pipe(s));
    sink = await tcpUpstream((s) => s.resume());
    source = await tcpUpstream((s) => {
      const t = setInterval(() => s.writable && s.write("."), 100);
      timers.push(t);
      s.once("close", () => clearInterval(t));
    });
    http = createHttpServer((req, res) => {
      if (req.url === "/hang") return; // answers nothing, ever
      res.writeHead(200, { "content-type": "text/plain" });
      let n = 0;
      const t = setInterval(() => {
        res.write(`${n}\n`);
        if (++n === 12) {
          clearInterval(t);
          res.end("done\n");
        }
      }, 100);
      timers.push(t);
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const port = (s: { address(): unknown }) => (s.address() as AddressInfo).port;
    proxy = new EgressProxy({
      logger: silentLogger(),
      idleTimeoutMs: IDLE_MS,
      hostMap: {
        "echo.test": `127.0.0.1:${echo.port}`,
        "sink.test": `127.0.0.1:${sink.port}`,
        "source.test": `127.0.0.1:${source.port}`,
        "web.test": `127.0.0.1:${port(http)}`,
      },
      decide: async (_sandboxId, host) => ({ allowed: host !== "denied.test" }),
    });
    path = await proxy.open("sbx_idle");
  });
  afterAll(async () => {
    for (const t of timers) clearInterval(t);
    await proxy?.closeAll();
    http?.closeAllConnections();
    for (const u of [echo, sink, source]) {
      for (const s of u?.sockets ?? []) s.destroy();
      u?.server.close();
    }
    http?.close();
  });

  it("ends a tunnel idle both ways on both sides", async () => {
    const { socket, answer } = await tunnel(path, "echo.test:7");
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    socket.write("hi");
    const [echoed] = await once(socket, "data");
    expect(String(echoed)).toBe("hi");
    const started = Date.now();
    const upstreamSide = echo.sockets.at(-1) as Socket;
    // Both peers see an orderly end (a FIN), not a reset.
    await expect(Promise.all([ended(socket), ended(upstreamSide)])).resolves.toEqual(["end", "end"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(Date.now() - started).toBeLessThan(IDLE_MS + 1500);
  }, 10_000);

  it("keeps tunnels that carry bytes either way, however long", async () => {
    const up = await tunnel(path, "sink.test:9");
    const down = await tunnel(path, "source.test:19");
    const writer = setInterval(() => up.socket.write("."), 100);
    timers.push(writer);
    let received = 0;
    down.socket.on("data", (d: Buffer) => {
      received += d.length;
    });
    const cut: string[] = [];
    up.socket.once("end", () => cut.push("up"));
    down.socket.once("end", () => cut.push("down"));
    await sleep(IDLE_MS * 4);
    expect(cut).toEqual([]);
    expect(received).toBeGreaterThan(10);
    expect(up.socket.destroyed || down.socket.destroyed).toBe(false);
    clearInterval(writer);
    up.socket.destroy();
    down.socket.destroy();
  }, 10_000);

  it("cuts a refused tunnel whose sandbox never closes its side once it has been idle", async () => {
    const socket = connect({ path, allowHalfOpen: true });
    socket.on("error", () => {});
    socket.write("CONNECT denied.test:443 HTTP/1.1\r\nhost: denied.test:443\r\n\r\n");
    let answer = "";
    socket.on("data", (d: Buffer) => {
      answer += d.toString();
    });
    await once(socket, "end");
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    // Half open on purpose: the proxy's side must not wait for this one forever. Its close shows
    // only when something is written to it.
    await sleep(IDLE_MS + 300);
    const closed = new Promise((resolve) => socket.once("close", () => resolve("closed")));
    socket.write("still there?");
    expect(await Promise.race([closed, sleep(1500).then(() => "open")])).toBe("closed");
    socket.destroy();
  }, 10_000);

  it("answers 504 for a plain request idle both ways, and keeps one whose answer trickles", async () => {
    const hung = await ask(path, "GET http://web.test/hang HTTP/1.1\r\nhost: web.test\r\n\r\n");
    expect(hung.answer).toMatch(/^HTTP\/1\.1 504 /);
    expect(hung.answer).toMatch(/connection: close/i);
    await ended(hung.socket);

    const slow = await ask(path, "GET http://web.test/slow HTTP/1.1\r\nhost: web.test\r\nconnection: close\r\n\r\n");
    expect(slow.answer).toMatch(/^HTTP\/1\.1 200 /);
    let body = "";
    slow.socket.on("data", (d: Buffer) => {
      body += d.toString();
    });
    await ended(slow.socket);
    // 1.2 s of answer, 100 ms apart, through a 400 ms idle timeout.
    expect(body).toContain("done");
  }, 10_000);
});

describe("egress attempt rate", () => {
  let proxy: EgressProxy;
  let decided = 0;

  beforeAll(() => {
    proxy = new EgressProxy({
      logger: silentLogger(),
      attemptRate: 4,
      attemptBurst: 3,
      decide: async () => {
        decided++;
        return { allowed: false, ruleId: "nowhere" };
      },
    });
  });
  afterAll(async () => {
    await proxy?.closeAll();
  });

  it("refuses attempts past a sandbox's burst with 429 before deciding them, and refills", async () => {
    const path = await proxy.open("sbx_hammer");
    const answers = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const { socket, answer } =
          i % 2 === 0
            ? await tunnel(path, "denied.test:443")
            : await ask(path, "GET http://denied.test/ HTTP/1.1\r\nhost: denied.test\r\n\r\n");
        socket.destroy();
        return answer;
      }),
    );
    const statuses = answers.map((a) => a.slice(9, 12)).sort();
    expect(statuses).toEqual([...Array(3).fill("403"), ...Array(9).fill("429")]);
    expect(decided).toBe(3);
    const limited = answers.find((a) => a.startsWith("HTTP/1.1 429")) as string;
    expect(limited).toMatch(/^retry-after: 1\r$/im);
    expect(limited).toMatch(/content-type: application\/problem\+json/i);

    // A neighbour has a bucket of its own.
    const other = await proxy.open("sbx_quiet");
    const neighbour = await tunnel(other, "denied.test:443");
    neighbour.socket.destroy();
    expect(neighbour.answer).toMatch(/^HTTP\/1\.1 403 /);

    // 4 a second: one more attempt after 250 ms.
    await sleep(300);
    const again = await tunnel(path, "denied.test:443");
    again.socket.destroy();
    expect(again.answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(decided).toBe(5);
  });

  it("keeps two numbers per sandbox and refills them at the rate", () => {
    let now = 0;
    const bucket = new AttemptBucket(10, 2, () => now);
    expect([bucket.take(), bucket.take()]).toEqual([0, 0]);
    expect(bucket.take()).toBe(100);
    now = 50;
    expect(bucket.take()).toBe(50);
    now = 100;
    expect(bucket.take()).toBe(0);
    now = 10_000;
    expect([bucket.take(), bucket.take(), bucket.take()]).toEqual([0, 0, 100]);
  });

  it("reports a sandbox's refusals at most once a minute, with how many there were", () => {
    let now = 0;
    const bucket = new AttemptBucket(1, 1, () => now);
    expect(bucket.report()).toBe(0);
    bucket.take();
    for (let i = 0; i < 5; i++) bucket.take();
    expect(bucket.report()).toBe(5);
    for (let i = 0; i < 1000; i++) {
      now += 10;
      bucket.take();
      expect(bucket.report()).toBe(0);
    }
    now = 60_000;
    bucket.take();
    expect(bucket.report()).toBeGreaterThan(900);
  });
});

describe("egress bounds configuration", () => {
  it("defaults to 5 min idle, 50 attempts a second and a burst of 200", () => {
    expect(configFromEnv({}).egressLimits).toEqual({ idleTimeoutMs: 300_000, attemptRate: 50, attemptBurst: 200 });
    expect(
      configFromEnv({
        SANDBOX_EGRESS_IDLE_TIMEOUT_MS: "60000",
        SANDBOX_EGRESS_ATTEMPTS_PER_SECOND: "5",
        SANDBOX_EGRESS_ATTEMPT_BURST: "10",
      }).egressLimits,
    ).toEqual({ idleTimeoutMs: 60_000, attemptRate: 5, attemptBurst: 10 });
  });

  it.each([
    ["SANDBOX_EGRESS_IDLE_TIMEOUT_MS", "10"],
    ["SANDBOX_EGRESS_ATTEMPTS_PER_SECOND", "0"],
    ["SANDBOX_EGRESS_ATTEMPT_BURST", "many"],
  ])("fails fast naming %s=%s", (name, value) => {
    let error: unknown;
    try {
      configFromEnv({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual([name]);
  });
});
