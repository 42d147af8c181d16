import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  INTERNAL_IDENTITY_HEADER,
  internalResolveApiTokenRoute,
  type Principal,
  SANDBOX_INGRESS_HEADER,
} from "@agentplane/contracts";
import {
  generateInternalKeys,
  httpFetch,
  ServiceClient,
  servicePrincipal,
  signIdentity,
} from "@agentplane/service-kit";
import {
  createTestDatabase,
  requirePostgres,
  requireRedis,
  TEST_REDIS_URL,
  type TestDatabase,
} from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { freePort, type Spawned, spawnNode, waitForHealth } from "../../../tests/e2e/processes.ts";
import {
  bearerProtocol,
  execQuery,
  INGRESS_TEST_SERVER,
  openExec,
  requireBwrap,
  requireSandboxNode,
} from "./sandbox-harness.ts";

const pg = await requirePostgres();
const redis = await requireRedis();
const bwrap = requireBwrap();
const node = requireSandboxNode();
const LAUNCHER = "apps/platform/src/main.ts";

async function call<T = Record<string, unknown>>(
  base: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

describe.skipIf(!pg.available || !redis.available || !bwrap.available || !node.available)(
  `distributed: sandbox-svc as its own process behind a separate gateway${pg.reason}${redis.reason}${bwrap.reason}${node.reason}`,
  () => {
    let database: TestDatabase;
    const processes: Spawned[] = [];
    const dataDir = mkdtempSync(join(tmpdir(), "sandbox-distributed-"));
    const bootstrapToken = `boot_${randomBytes(24).toString("hex")}`;
    let gatewayUrl = "";
    let sandboxUrl = "";
    let tenancyUrl = "";
    let projectId = "";
    let adminToken = "";
    let viewerToken = "";
    let sandboxId = "";
    let keys: Awaited<ReturnType<typeof generateInternalKeys>>;

    beforeAll(async () => {
      database = await createTestDatabase("sbxdist");
      keys = await generateInternalKeys();
      const [tenancyPort, sandboxPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
      gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
      sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
      tenancyUrl = `http://127.0.0.1:${tenancyPort}`;
      const shared = {
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
        AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
        TENANCY_URL: `http://127.0.0.1:${tenancyPort}`,
        PUBLIC_URL: gatewayUrl,
      };
      const tenancy = spawnNode(LAUNCHER, ["--target=tenancy"], {
        ...shared,
        PORT: String(tenancyPort),
        AGENTPLANE_BOOTSTRAP_TOKEN: bootstrapToken,
      });
      processes.push(tenancy);
      const sandbox = spawnNode(LAUNCHER, ["--target=sandbox"], {
        ...shared,
        PORT: String(sandboxPort),
        SANDBOX_DATA_DIR: dataDir,
        AGENTPLANE_API_URL: gatewayUrl,
      });
      processes.push(sandbox);
      await Promise.all([waitForHealth(shared.TENANCY_URL), waitForHealth(sandboxUrl)]);
      const gateway = spawnNode(LAUNCHER, ["--target=gateway"], {
        ...shared,
        PORT: String(gatewayPort),
        SANDBOX_URL: sandboxUrl,
        SANDBOX_INGRESS_HOST: "sbx.localhost",
      });
      processes.push(gateway);
      await waitForHealth(gatewayUrl);

      const owner = (m: string, p: string, b?: unknown) =>
        call<{ id: string; token: string }>(gatewayUrl, bootstrapToken, m, p, b);
      const org = await owner("POST", "/v1/orgs", { name: "Distributed" });
      expect(org.status).toBe(201);
      const project = await owner("POST", `/v1/orgs/${org.body.id}/projects`, { name: "remote" });
      projectId = project.body.id;
      adminToken = (await owner("POST", `/v1/orgs/${org.body.id}/api-tokens`, { name: "a", role: "admin" })).body.token;
      viewerToken = (await owner("POST", `/v1/orgs/${org.body.id}/api-tokens`, { name: "v", role: "viewer" })).body
        .token;
      // Three processes each compile and migrate on start: slow on a loaded 2-core machine.
    }, 180_000);

    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()));
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("refuses direct calls to the sandbox service without an internal identity", async () => {
      const res = await call(sandboxUrl, adminToken, "GET", `/v1/projects/${projectId}/sandboxes`);
      expect(res.status).toBe(401);
    });

    it("creates and starts a sandbox through the gateway, authorized remotely by tenancy", async () => {
      const created = await call<{ id: string; state: string }>(
        gatewayUrl,
        adminToken,
        "POST",
        `/v1/projects/${projectId}/sandboxes`,
        { name: "remote-box", env: { WHERE: "distributed" } },
      );
      expect(created.status).toBe(201);
      expect(created.body.state).toBe("pending");
      sandboxId = created.body.id;
      const started = await call<{ state: string }>(
        gatewayUrl,
        adminToken,
        "POST",
        `/v1/projects/${projectId}/sandboxes/${sandboxId}/start`,
      );
      expect(started.status).toBe(200);
      expect(started.body.state).toBe("running");
      const asViewer = await call(
        gatewayUrl,
        viewerToken,
        "POST",
        `/v1/projects/${projectId}/sandboxes/${sandboxId}/stop`,
      );
      expect(asViewer.status).toBe(403);
      expect(
        (await call(gatewayUrl, viewerToken, "GET", `/v1/projects/${projectId}/sandboxes/${sandboxId}`)).status,
      ).toBe(200);
    });

    it("execs a command and resolves the sandbox's own token over HTTP", async () => {
      const res = await call<{ exitCode: number; stdout: string }>(gatewayUrl, adminToken, "POST", "/v1/shell/exec", {
        projectId,
        sandboxId,
        command: 'echo "$WHERE"; printf %s "$AGENTPLANE_TOKEN" >&2',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ exitCode: 0, stdout: "distributed\n" });
      const token = (res.body as unknown as { stderr: string }).stderr;
      const me = await call<{ type: string; sandboxId: string }>(gatewayUrl, token, "GET", "/v1/auth/me");
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ type: "sandbox", sandboxId });
      expect((await call(gatewayUrl, token, "GET", `/v1/projects/${projectId}/sandboxes`)).status).toBe(403);
    });

    it("streams a WebSocket exec through the gateway to the sandbox process", async () => {
      const url = `${gatewayUrl.replace(/^http/, "ws")}/v1/projects/${projectId}/sandboxes/${sandboxId}/exec${execQuery(["sh", "-c", "cat; echo done"])}`;
      const s = await openExec(url, ["v5.channel.k8s.io", bearerProtocol(adminToken)]);
      if ("refused" in s) throw new Error(`refused ${s.refused}`);
      expect(s.ws.protocol).toBe("v5.channel.k8s.io");
      s.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from("over the wire\n")]));
      s.ws.send(Buffer.from([255, 0]));
      expect(await s.status).toEqual({ metadata: {}, status: "Success" });
      expect(Buffer.concat(s.out).toString()).toBe("over the wire\ndone\n");

      expect(await openExec(url, ["v5.channel.k8s.io"])).toEqual({ refused: 401 });
      expect(await openExec(url, ["v5.channel.k8s.io", bearerProtocol(viewerToken)])).toEqual({ refused: 403 });
    });

    it("serves ingress forwarded over HTTP with the ingress header, directly and through the gateway", async () => {
      const slug = `dist-${randomBytes(3).toString("hex")}`;
      const web = await call<{ id: string }>(gatewayUrl, adminToken, "POST", `/v1/projects/${projectId}/sandboxes`, {
        name: "web",
        slug,
        start: true,
        command: ["node", "-e", INGRESS_TEST_SERVER],
        ports: [
          { port: 8000, visibility: "private" },
          { port: 8001, visibility: "public" },
        ],
      });
      expect(web.status).toBe(201);
      // What the gateway does: resolve the bearer with tenancy, sign the principal for sandbox-svc.
      const tenancy = new ServiceClient("tenancy", httpFetch(tenancyUrl), keys);
      const { principal } = await tenancy.request<{ principal: Principal }>("POST", internalResolveApiTokenRoute.path, {
        principal: servicePrincipal("api-gateway"),
        body: { token: adminToken },
      });
      const identity = await signIdentity(keys, principal, { audience: "sandbox" });
      const forwarded = async (target: string, withIdentity: boolean) => {
        const res = await fetch(`${sandboxUrl}/v1/anything?q=1`, {
          headers: {
            [SANDBOX_INGRESS_HEADER]: target,
            ...(withIdentity ? { [INTERNAL_IDENTITY_HEADER]: identity } : {}),
          },
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      await vi.waitFor(async () => expect((await forwarded(`${slug}:8001`, false)).status).toBe(200), {
        timeout: 10_000,
        interval: 100,
      });
      expect(await forwarded(`${slug}:8001`, false)).toMatchObject({
        status: 200,
        body: { port: 8001, path: "/v1/anything?q=1", internal: [] },
      });
      expect((await forwarded(slug, false)).status).toBe(401);
      expect(await forwarded(slug, true)).toMatchObject({ status: 200, body: { port: 8000, internal: [] } });

      // The same through the separately started gateway, addressed by Host as a browser would.
      const viaGateway = (host: string, token?: string) =>
        new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
          const req = httpRequest(
            {
              host: "127.0.0.1",
              port: Number(new URL(gatewayUrl).port),
              path: "/v1/anything?q=2",
              headers: { host, ...(token ? { authorization: `Bearer ${token}` } : {}) },
            },
            (res) => {
              let text = "";
              res.on("data", (c) => {
                text += c;
              });
              res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
            },
          );
          req.on("error", reject);
          req.end();
        });
      expect(await viaGateway(`8001-${slug}.sbx.localhost`)).toMatchObject({
        status: 200,
        body: { port: 8001, path: "/v1/anything?q=2" },
      });
      expect((await viaGateway(`${slug}.sbx.localhost`)).status).toBe(401);
      expect(await viaGateway(`${slug}.sbx.localhost`, adminToken)).toMatchObject({
        status: 200,
        body: { port: 8000 },
      });
      const throughGateway = new WebSocket(`${gatewayUrl.replace(/^http/, "ws")}/socket`, {
        headers: { host: `${slug}.sbx.localhost`, authorization: `Bearer ${adminToken}` },
      });
      expect(
        await new Promise<string>((resolve, reject) => {
          throughGateway.once("message", (m) => resolve(m.toString()));
          throughGateway.once("error", reject);
        }),
      ).toBe("hello from 8000");
      throughGateway.terminate();

      const ws = new WebSocket(`${sandboxUrl.replace(/^http/, "ws")}/socket`, {
        headers: { [SANDBOX_INGRESS_HEADER]: slug, [INTERNAL_IDENTITY_HEADER]: identity },
      });
      const first = await new Promise<string>((resolve, reject) => {
        ws.once("message", (m) => resolve(m.toString()));
        ws.once("error", reject);
      });
      expect(first).toBe("hello from 8000");
      ws.terminate();
      await call(gatewayUrl, adminToken, "DELETE", `/v1/projects/${projectId}/sandboxes/${web.body.id}`);
    });

    it("stops and deletes the sandbox", async () => {
      const base = `/v1/projects/${projectId}/sandboxes/${sandboxId}`;
      expect((await call<{ state: string }>(gatewayUrl, adminToken, "POST", `${base}/stop`)).body.state).toBe(
        "stopped",
      );
      expect((await call(gatewayUrl, adminToken, "DELETE", base)).status).toBe(204);
      expect((await call(gatewayUrl, adminToken, "GET", base)).status).toBe(404);
    });
  },
);
