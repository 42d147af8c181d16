import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import {
  createLogger,
  generateInternalKeys,
  type InternalKeys,
  importOwnKeys,
  importScopedPublicKey,
  parseEnv,
  type RunningServer,
  serveFetch,
  silentLogger,
} from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSandboxService, SANDBOX_SCHEMA, type SandboxService } from "../../src/app.ts";
import type { SandboxDB } from "../../src/db/schema.ts";
import { kubernetesConfigFrom } from "../../src/driver/kubernetes/config.ts";
import { EgressCredentials, egressCredentialKeyFrom } from "../../src/driver/kubernetes/egress-credential.ts";
import {
  createEgressProxyService,
  EgressEnvSchema,
  type EgressProxyService,
  egressSettings,
} from "../../src/driver/kubernetes/egress-service.ts";
import { tempDataDir } from "../helpers.ts";
import { runningSandboxRow } from "../running-sandbox-row.ts";
import { EGRESS_KEY } from "./fixture.ts";

/** One request through the proxy: a plain forward (`GET http://…`) or a CONNECT. */
function viaProxy(port: number, target: string, auth?: string, method = "GET") {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port,
      method,
      path: target,
      headers: auth ? { "proxy-authorization": auth } : {},
    });
    const collect = (res: import("node:http").IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    };
    req.on("response", collect);
    req.on("connect", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "" });
    });
    req.on("error", reject);
    req.end();
  });
}

/** A sandbox row as sandbox-svc records it (its driver's Pod is not needed to decide its egress). */
async function insertSandbox(database: Database, id: string): Promise<void> {
  await database
    .forSchema<SandboxDB>(SANDBOX_SCHEMA)
    .insertInto("sandboxes")
    .values(runningSandboxRow({ id, project_id: "prj_window", org_id: "org_window" }))
    .execute();
}

/** A server that accepts connections and never answers (a hung sandbox-svc). */
async function silentServer(): Promise<Server> {
  const server = createServer(() => {});
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/**
 * The egress deployable beside a real sandbox-svc (on its own database, which the proxy never
 * sees) and a governance stand-in under which no binding governs egress: every destination of a
 * known sandbox is refused, and sandbox-svc records each refusal (decision 0065).
 */
describe("the egress proxy deployable (--target=egress), beside sandbox-svc and governance", () => {
  let database: Database;
  let sandboxSvc: SandboxService;
  let sandboxServer: RunningServer;
  let governance: Server;
  let hung: Server;
  let service: EgressProxyService;
  let egressKeys: InternalKeys;
  const bus = new MemoryBus();
  const denied: Record<string, unknown>[] = [];
  const logLines: string[] = [];
  // As sandbox-svc issues them: its settings with the same key (and its master secret, which the proxy lacks).
  const issued = kubernetesConfigFrom({
    SANDBOX_K8S_EGRESS_PROXY: "agentplane/app.kubernetes.io/component=egress:3128",
    SANDBOX_K8S_EGRESS_PROXY_URL: "http://agentplane-egress.agentplane.svc:3128",
    SANDBOX_EGRESS_CREDENTIAL_KEY: EGRESS_KEY,
    AGENTPLANE_SECRET_KEY: "the-platform-master-secret-of-32b",
  }).egressCredentialKey as string;
  const credentials = new EgressCredentials(issued);
  const basic = (id: string) => `Basic ${Buffer.from(`${id}:${credentials.credential(id)}`).toString("base64")}`;
  let env: Record<string, string>;
  const started: EgressProxyService[] = [];

  /** Another egress proxy of the same settings, with some of them changed. */
  const startEgress = async (changed: Record<string, string>, logger = silentLogger()) => {
    const proxy = await createEgressProxyService({
      ...egressSettings(parseEnv(EgressEnvSchema, { ...env, ...changed })),
      keys: egressKeys,
      logger,
    });
    started.push(proxy);
    return proxy;
  };

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    const pair = await generateInternalKeys();
    egressKeys = await importOwnKeys("egress", "EGRESS_IDENTITY_PRIVATE_KEY", JSON.stringify(pair.privateJwk));
    sandboxSvc = await createSandboxService({
      database,
      bus,
      keys: await generateInternalKeys(),
      egressPublicKey: await importScopedPublicKey("EGRESS_IDENTITY_PUBLIC_KEY", JSON.stringify(pair.publicJwk)),
      logger: silentLogger(),
      authorizer: { check: () => Promise.reject(new Error("the proxy's calls do not ask tenancy")) },
      config: { dataDir: tempDataDir() },
    });
    sandboxServer = await serveFetch((r) => sandboxSvc.fetch(r), { port: 0, hostname: "127.0.0.1" });
    await insertSandbox(database, "sbx_window");
    await insertSandbox(database, "sbx_down");
    await bus.subscribe("audit.recorded", async (e) => {
      const data = e.data as { action: string; details: Record<string, unknown> };
      if (data.action === "sandbox.egress_denied") denied.push(data.details);
    });
    governance = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ actions: [] }));
    });
    await new Promise<void>((r) => governance.listen(0, "127.0.0.1", r));
    hung = await silentServer();
    // The proxy's whole environment: no database, no bus, no master key.
    env = {
      HOST: "127.0.0.1",
      GOVERNANCE_URL: urlOf(governance),
      SANDBOX_URL: sandboxServer.url,
      SANDBOX_EGRESS_CREDENTIAL_KEY: EGRESS_KEY,
      EGRESS_PROXY_PORT: "0",
      SANDBOX_EGRESS_REFUSAL_WINDOW_MS: "300",
    };
    service = await startEgress({});
  });
  afterAll(async () => {
    for (const proxy of started) await proxy.close();
    await sandboxSvc?.close();
    await sandboxServer?.close();
    await database?.close();
    governance?.close();
    hung?.close();
  });

  it("reads no database or bus setting, and needs SANDBOX_URL", () => {
    const settings = Object.keys(EgressEnvSchema.shape);
    for (const name of ["DATABASE_URL", "REDIS_URL", "AGENTPLANE_SECRET_KEY"]) expect(settings).not.toContain(name);
    const { SANDBOX_URL: _url, ...rest } = env;
    expect(() => parseEnv(EgressEnvSchema, rest)).toThrow(/SANDBOX_URL/);
  });

  it("is ready when sandbox-svc and governance answer, and not when sandbox-svc does not", async () => {
    const ready = await service.fetch(new Request("http://egress/health/ready"));
    expect(ready.status).toBe(200);
    const cut = await startEgress({ SANDBOX_URL: "http://127.0.0.1:1" });
    const res = await cut.fetch(new Request("http://egress/health/ready"));
    expect(res.status).toBe(503);
    expect(JSON.stringify(await res.json())).toMatch(/sandbox/);
  });

  it("answers 407 with a challenge to a request that names no sandbox, or proves none", async () => {
    const port = service.proxyAddress.port;
    for (const auth of [undefined, `Basic ${Buffer.from("sbx_x:forged").toString("base64")}`]) {
      const plain = await viaProxy(port, "http://registry.test/", auth);
      expect(plain.status).toBe(407);
      expect(plain.headers["proxy-authenticate"]).toBe('Basic realm="agentplane-egress"');
      expect(JSON.parse(plain.body)).toMatchObject({ status: 407 });
      expect((await viaProxy(port, "registry.test:443", auth, "CONNECT")).status).toBe(407);
    }
  });

  it("sends a sandbox sandbox-svc does not know nowhere", async () => {
    const port = service.proxyAddress.port;
    const plain = await viaProxy(port, "http://registry.test/", basic("sbx_unknown"));
    expect(plain.status).toBe(403);
    expect(plain.headers["content-type"]).toBe("application/problem+json");
    expect((await viaProxy(port, "registry.test:443", basic("sbx_unknown"), "CONNECT")).status).toBe(403);
  });

  it("verifies the credentials sandbox-svc issues with SANDBOX_EGRESS_CREDENTIAL_KEY, without the master key", async () => {
    const port = service.proxyAddress.port;
    // Proven: decided by governance (refused there), not turned away at the door.
    expect((await viaProxy(port, "http://registry.test/", basic("sbx_window"))).status).toBe(403);
    // A credential under the master secret's derived key proves nothing here.
    const other = new EgressCredentials(egressCredentialKeyFrom("the-platform-master-secret-of-32b"));
    const forged = `Basic ${Buffer.from(`sbx_window:${other.credential("sbx_window")}`).toString("base64")}`;
    expect((await viaProxy(port, "http://registry.test/", forged)).status).toBe(407);
    await vi.waitFor(() => expect(denied.length).toBeGreaterThan(0), { timeout: 5000 });
    denied.length = 0;
  });

  it("has sandbox-svc record its refusals, repeats counted within SANDBOX_EGRESS_REFUSAL_WINDOW_MS", async () => {
    const port = service.proxyAddress.port;
    for (let i = 0; i < 3; i++) {
      expect((await viaProxy(port, "registry.test:443", basic("sbx_window"), "CONNECT")).status).toBe(403);
    }
    // The first at once; the two repeats in one record when the 0.3 s window ends (not after 60 s).
    await vi.waitFor(() => expect(denied).toHaveLength(2), { timeout: 5000 });
    expect(denied[0]).toEqual({
      host: "registry.test",
      port: 443,
      ruleId: null,
      reasons: [],
      policies: [],
      reason: "no policy permits egress from this sandbox",
    });
    expect(denied[1]).toMatchObject({ host: "registry.test", port: 443, repeats: 2, windowSeconds: 0.3 });
  });

  it("refuses connections when sandbox-svc does not answer in time, and says so once per window", async () => {
    const logger = createLogger("egress-proxy", "info", { write: (line) => logLines.push(line) });
    const proxy = await startEgress(
      { SANDBOX_URL: urlOf(hung), EGRESS_SANDBOX_TIMEOUT_MS: "200", SANDBOX_EGRESS_REFUSAL_WINDOW_MS: "60000" },
      logger,
    );
    const startedAt = Date.now();
    for (let i = 0; i < 3; i++) {
      const res = await viaProxy(proxy.proxyAddress.port, "http://registry.test/", basic("sbx_down"));
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body)).toMatchObject({ detail: expect.stringMatching(/sandbox service is unavailable/) });
    }
    // Each attempt bounded by the 0.2 s deadline, not left waiting on a server that never answers.
    expect(Date.now() - startedAt).toBeLessThan(3000);
    expect(logLines.filter((l) => l.includes("did not answer a sandbox's egress facts"))).toHaveLength(1);
    // And one that does not listen at all: refused too.
    const gone = await startEgress({ SANDBOX_URL: "http://127.0.0.1:1" });
    expect((await viaProxy(gone.proxyAddress.port, "registry.test:443", basic("sbx_down"), "CONNECT")).status).toBe(
      503,
    );
  });
});
