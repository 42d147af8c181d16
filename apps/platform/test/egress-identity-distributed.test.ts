// The egress proxy as the launcher runs it (`--target=egress`), beside governance and sandbox-svc:
// it signs its calls with its own key and holds no shared private key, and what it signs opens
// nothing but its own calls (decision 0062); it holds no database or bus setting either, asking
// sandbox-svc for what it needs of sandboxes (decision 0065).
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  INTERNAL_IDENTITY_HEADER,
  internalDecideRoute,
  internalGetSandboxEgressRoute,
  internalRecordEgressRefusalRoute,
  type Principal,
} from "@agentplane/contracts";
import { openDatabase } from "@agentplane/db";
import { generateInternalKeys, importOwnKeys, servicePrincipal, signIdentity } from "@agentplane/service-kit";
import {
  createTestDatabase,
  requirePostgres,
  requireRedis,
  TEST_REDIS_URL,
  type TestDatabase,
} from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Spawned, spawnNode, waitForHealth } from "../../../tests/e2e/processes.ts";
import { runningSandboxRow } from "../../sandbox-svc/test/running-sandbox-row.ts";

const pg = await requirePostgres();
const redis = await requireRedis();
const LAUNCHER = "apps/platform/src/main.ts";

/** A plain HTTP request through the proxy with a sandbox's credential, as a sandbox Pod sends it. */
function viaProxy(port: number, target: string, auth: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: target, headers: { "proxy-authorization": auth } });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe.skipIf(!pg.available || !redis.available)(
  `distributed: the egress proxy signs with its own identity key${pg.reason}${redis.reason}`,
  () => {
    let database: TestDatabase;
    const processes: Spawned[] = [];
    const dataDir = mkdtempSync(join(tmpdir(), "egress-identity-"));
    const credentialKey = randomBytes(32).toString("base64");
    let egress: Spawned;
    let egressPrivateJwk = "";
    let proxyPort = 0;
    let egressUrl = "";
    const urls = { sandbox: "", governance: "" };
    const sandbox: Principal = {
      type: "sandbox",
      id: "sbx_egressid",
      sandboxId: "sbx_egressid",
      projectId: "prj_egressid",
      orgId: "org_egressid",
    };

    beforeAll(async () => {
      database = await createTestDatabase("egressid");
      const shared = await generateInternalKeys();
      const pair = await generateInternalKeys();
      egressPrivateJwk = JSON.stringify(pair.privateJwk);
      const [sandboxPort, governancePort, egressPort, tenancyPort] = await Promise.all([
        freePort(),
        freePort(),
        freePort(),
        freePort(),
      ]);
      proxyPort = await freePort();
      urls.sandbox = `http://127.0.0.1:${sandboxPort}`;
      urls.governance = `http://127.0.0.1:${governancePort}`;
      const stores = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL, HOST: "127.0.0.1" };
      const services = {
        ...stores,
        INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(shared.privateJwk),
        AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
        // Nothing here calls tenancy: a sandbox reads its own effective policy without it.
        TENANCY_URL: `http://127.0.0.1:${tenancyPort}`,
      };
      processes.push(
        spawnNode(LAUNCHER, ["--target=sandbox"], {
          ...services,
          PORT: String(sandboxPort),
          SANDBOX_DATA_DIR: dataDir,
          EGRESS_IDENTITY_PUBLIC_KEY: JSON.stringify(pair.publicJwk),
        }),
        spawnNode(LAUNCHER, ["--target=governance"], {
          ...services,
          PORT: String(governancePort),
          SANDBOX_URL: urls.sandbox,
          EGRESS_IDENTITY_PUBLIC_KEY: JSON.stringify(pair.publicJwk),
        }),
      );
      await Promise.all([waitForHealth(urls.sandbox, 120_000), waitForHealth(urls.governance, 120_000)]);
      // The proxy's whole environment, as the chart gives its Pod: no shared private key, no
      // database or bus (HOST only of the stores' variables).
      egress = spawnNode(LAUNCHER, ["--target=egress"], {
        HOST: stores.HOST,
        DATABASE_URL: "",
        REDIS_URL: "",
        INTERNAL_IDENTITY_PRIVATE_KEY: "",
        PORT: String(egressPort),
        GOVERNANCE_URL: urls.governance,
        SANDBOX_URL: urls.sandbox,
        SANDBOX_EGRESS_CREDENTIAL_KEY: credentialKey,
        EGRESS_PROXY_PORT: String(proxyPort),
        EGRESS_IDENTITY_PRIVATE_KEY: egressPrivateJwk,
      });
      processes.push(egress);
      await waitForHealth(`http://127.0.0.1:${egressPort}`, 120_000);
      egressUrl = `http://127.0.0.1:${egressPort}`;

      // A running sandbox as sandbox-svc records it (the driver's Pod is not needed to decide its egress).
      const db = await openDatabase(database.url, { max: 1 });
      await db.kysely
        .withSchema("sandbox")
        .insertInto("sandboxes" as never)
        .values(
          runningSandboxRow({
            id: sandbox.sandboxId as string,
            project_id: sandbox.projectId,
            org_id: sandbox.orgId,
            name: "egressid",
            slug: "egressid",
          }),
        )
        .execute();
      await db.close();
    }, 240_000);

    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()));
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("starts without the shared private key and does not fall back to it", () => {
      expect(egress.output()).not.toMatch(/EGRESS_IDENTITY_PRIVATE_KEY is not set/);
    });

    it("is ready on sandbox-svc and governance, with no database or bus of its own", async () => {
      const res = await fetch(`${egressUrl}/health/ready`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { checks: Record<string, string> };
      expect(body.checks).toEqual({ sandbox: "up", governance: "up" });
    });

    it("has a sandbox's destination decided by governance with its own identity", async () => {
      const credential = createHmac("sha256", Buffer.from(credentialKey, "base64"))
        .update(sandbox.sandboxId as string)
        .digest("base64url");
      const auth = `Basic ${Buffer.from(`${sandbox.sandboxId}:${credential}`).toString("base64")}`;
      const res = await viaProxy(proxyPort, "http://registry.test/", auth);
      // Governance answered its effective policy (no binding opens egress): a refusal, not a 503
      // from a governance that refused the proxy's identity.
      expect(res.status, `${res.body}\n${processes.map((p) => p.output()).join("\n")}`).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ detail: expect.stringMatching(/No policy permits egress/) });
    });

    it("signs identities that governance takes for egress decisions only, and sandbox-svc not at all", async () => {
      const own = await importOwnKeys("egress", "EGRESS_IDENTITY_PRIVATE_KEY", egressPrivateJwk);
      const send = async (
        base: string,
        audience: string,
        method: string,
        path: string,
        as: Principal,
        body?: unknown,
      ) =>
        fetch(`${base}${path}`, {
          method,
          headers: {
            [INTERNAL_IDENTITY_HEADER]: await signIdentity(own, as, { audience }),
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      const decision = {
        principal: sandbox,
        action: "sandbox:egress",
        resource: { type: "Host", id: "registry.test", orgId: sandbox.orgId, projectId: sandbox.projectId, labels: {} },
        context: { host: "registry.test", port: 80, platform: false },
      };
      const svc = servicePrincipal("sandbox");
      expect((await send(urls.governance, "governance", "POST", internalDecideRoute.path, svc, decision)).status).toBe(
        200,
      );
      // sandbox-svc answers its two calls as the `egress` service.
      const asEgress = servicePrincipal("egress");
      const facts = internalGetSandboxEgressRoute.path.replace("{sandboxId}", sandbox.sandboxId as string);
      const answered = await send(urls.sandbox, "sandbox", "GET", facts, asEgress);
      expect(answered.status).toBe(200);
      expect(await answered.json()).toEqual({
        id: sandbox.sandboxId,
        orgId: sandbox.orgId,
        projectId: sandbox.projectId,
        labels: {},
      });
      const refusal = {
        sandboxId: sandbox.sandboxId,
        host: "x.test",
        port: 80,
        ruleId: null,
        reasons: [],
        policies: [],
      };
      expect(
        (await send(urls.sandbox, "sandbox", "POST", internalRecordEgressRefusalRoute.path, asEgress, refusal)).status,
      ).toBe(200);
      const find = { projectId: sandbox.projectId, kinds: ["http-bearer"] };
      const refused = [
        await send(urls.governance, "governance", "POST", "/internal/governance/credentials/find", svc, find),
        await send(urls.governance, "governance", "GET", "/internal/governance/metrics", svc),
        await send(urls.governance, "governance", "GET", `/v1/orgs/${sandbox.orgId}/policies`, {
          type: "user",
          id: "usr_someone",
        }),
        await send(urls.sandbox, "sandbox", "GET", `/v1/projects/${sandbox.projectId}/sandboxes`, sandbox),
        await send(urls.sandbox, "sandbox", "POST", "/internal/sandboxes/query", servicePrincipal("governance"), {
          orgId: sandbox.orgId,
        }),
      ];
      for (const res of refused) {
        expect(res.status, res.url).toBe(401);
        expect(((await res.json()) as { detail: string }).detail).toBe("Invalid internal identity");
      }
    });
  },
);
