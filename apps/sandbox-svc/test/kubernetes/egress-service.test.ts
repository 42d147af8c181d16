import { request } from "node:http";
import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { MemoryBus, outboxMigrations } from "@agentplane/events";
import { generateInternalKeys, httpFetch, ServiceClient, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_SCHEMA } from "../../src/app.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import { EgressCredentials } from "../../src/driver/kubernetes/egress-credential.ts";
import { createEgressProxyService, type EgressProxyService } from "../../src/driver/kubernetes/egress-service.ts";
import { EGRESS_SECRET } from "./fixture.ts";

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
  const credentials = new EgressCredentials(EGRESS_SECRET);
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
      secret: EGRESS_SECRET,
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
