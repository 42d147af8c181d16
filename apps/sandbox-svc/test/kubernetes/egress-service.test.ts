import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { MemoryBus, outboxMigrations } from "@agentplane/events";
import { generateInternalKeys, httpFetch, parseEnv, ServiceClient, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SANDBOX_SCHEMA } from "../../src/app.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import type { SandboxDB } from "../../src/db/schema.ts";
import { kubernetesConfigFrom } from "../../src/driver/kubernetes/config.ts";
import { EgressCredentials, egressCredentialKeyFrom } from "../../src/driver/kubernetes/egress-credential.ts";
import {
  createEgressProxyService,
  EgressEnvSchema,
  type EgressProxyService,
  egressSettings,
} from "../../src/driver/kubernetes/egress-service.ts";
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

describe("the egress proxy deployable (--target=egress)", () => {
  let database: Database;
  let service: EgressProxyService;
  const credentials = new EgressCredentials(EGRESS_KEY);
  const basic = (id: string) => `Basic ${Buffer.from(`${id}:${credentials.credential(id)}`).toString("base64")}`;

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    // The schema sandbox-svc (or the migration Job) migrates; the proxy only reads it.
    await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
    const keys = await generateInternalKeys();
    service = await createEgressProxyService({
      database,
      bus: new MemoryBus(),
      keys,
      logger: silentLogger(),
      // Nothing listens on port 1: a sandbox that needs a decision would get 503.
      governance: new ServiceClient("governance", httpFetch("http://127.0.0.1:1"), keys),
      credentialKey: EGRESS_KEY,
      proxyPort: 0,
      proxyHost: "127.0.0.1",
    });
  });
  afterAll(async () => {
    await service?.close();
    await database?.close();
  });

  it("is ready once the sandbox schema exists", async () => {
    const res = await service.fetch(new Request("http://egress/health/ready"));
    expect(res.status).toBe(200);
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

  it("decides a proven sandbox's destinations with the sandbox's own rows: an unknown one goes nowhere", async () => {
    const port = service.proxyAddress.port;
    const plain = await viaProxy(port, "http://registry.test/", basic("sbx_unknown"));
    expect(plain.status).toBe(403);
    expect(plain.headers["content-type"]).toBe("application/problem+json");
    expect((await viaProxy(port, "registry.test:443", basic("sbx_unknown"), "CONNECT")).status).toBe(403);
  });
});

describe("the egress proxy deployable's settings", () => {
  let database: Database;
  let service: EgressProxyService;
  let governance: Server;
  const bus = new MemoryBus();
  const denied: Record<string, unknown>[] = [];
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

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
    const now = new Date();
    await database
      .forSchema<SandboxDB>(SANDBOX_SCHEMA)
      .insertInto("sandboxes")
      .values({
        id: "sbx_window",
        project_id: "prj_window",
        org_id: "org_window",
        name: "window",
        slug: "window",
        image: "default",
        command: null,
        env: {},
        resources: {},
        ports: [],
        idle_timeout_seconds: 0,
        labels: {},
        state: "running",
        current_revision: 1,
        last_error: null,
        platform_token_id: null,
        created_at: now,
        updated_at: now,
        started_at: now,
        last_activity_at: now,
        restore_revision: null,
      } as never)
      .execute();
    // Governance as a stand-in: no binding governs the sandbox's egress, so every destination is refused.
    governance = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ actions: [] }));
    });
    await new Promise<void>((r) => governance.listen(0, "127.0.0.1", r));
    // The proxy's whole environment: the credential key, never the platform's AGENTPLANE_SECRET_KEY.
    env = {
      DATABASE_URL: "pglite://memory",
      HOST: "127.0.0.1",
      GOVERNANCE_URL: `http://127.0.0.1:${(governance.address() as AddressInfo).port}`,
      SANDBOX_EGRESS_CREDENTIAL_KEY: EGRESS_KEY,
      EGRESS_PROXY_PORT: "0",
      SANDBOX_EGRESS_REFUSAL_WINDOW_MS: "300",
    };
    const settings = parseEnv(EgressEnvSchema, env);
    await bus.subscribe("audit.recorded", async (e) => {
      const data = e.data as { action: string; details: Record<string, unknown> };
      if (data.action === "sandbox.egress_denied") denied.push(data.details);
    });
    const keys = await generateInternalKeys();
    service = await createEgressProxyService({
      ...egressSettings(settings),
      database,
      bus,
      keys,
      logger: silentLogger(),
      governance: new ServiceClient("governance", httpFetch(settings.GOVERNANCE_URL), keys),
    });
  });
  afterAll(async () => {
    await service?.close();
    await database?.close();
    governance?.close();
  });

  it("verifies the credentials sandbox-svc issues with SANDBOX_EGRESS_CREDENTIAL_KEY, without the master key", async () => {
    expect(Object.keys(env)).not.toContain("AGENTPLANE_SECRET_KEY");
    const port = service.proxyAddress.port;
    // Proven: decided by governance (refused there), not turned away at the door.
    expect((await viaProxy(port, "http://registry.test/", basic("sbx_window"))).status).toBe(403);
    // A credential under the master secret's derived key, or under no key, proves nothing here.
    const other = new EgressCredentials(egressCredentialKeyFrom("the-platform-master-secret-of-32b"));
    const forged = `Basic ${Buffer.from(`sbx_window:${other.credential("sbx_window")}`).toString("base64")}`;
    expect((await viaProxy(port, "http://registry.test/", forged)).status).toBe(407);
    await vi.waitFor(() => expect(denied.length).toBeGreaterThan(0), { timeout: 5000 });
    denied.length = 0;
  });

  it("refuses to start without SANDBOX_EGRESS_CREDENTIAL_KEY, or with a bad one, naming it", () => {
    const { SANDBOX_EGRESS_CREDENTIAL_KEY: _key, ...rest } = env;
    for (const given of [rest, { ...rest, SANDBOX_EGRESS_CREDENTIAL_KEY: "c2hvcnQ=" }]) {
      expect(() =>
        parseEnv(EgressEnvSchema, { ...given, AGENTPLANE_SECRET_KEY: "the-platform-master-secret-of-32b" }),
      ).toThrow(/invalid configuration: SANDBOX_EGRESS_CREDENTIAL_KEY: /);
    }
  });

  it("counts repeated refusals within SANDBOX_EGRESS_REFUSAL_WINDOW_MS, as sandbox-svc's own proxy does", async () => {
    const port = service.proxyAddress.port;
    for (let i = 0; i < 3; i++) {
      expect((await viaProxy(port, "registry.test:443", basic("sbx_window"), "CONNECT")).status).toBe(403);
    }
    // The first at once; the two repeats in one record when the 0.3 s window ends (not after 60 s).
    await vi.waitFor(() => expect(denied).toHaveLength(2), { timeout: 5000 });
    expect(denied[0]).toMatchObject({ host: "registry.test", port: 443 });
    expect(denied[0]).not.toHaveProperty("repeats");
    expect(denied[1]).toMatchObject({ host: "registry.test", port: 443, repeats: 2, windowSeconds: 0.3 });
  });
});
