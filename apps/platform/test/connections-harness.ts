import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ConnectionsService } from "@agentplane/connections-svc";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { createLogger, type Logger, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, type TestDatabase } from "@agentplane/testkit";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

export interface CallResult<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}
export type Call = <T = Record<string, unknown>>(
  method: string,
  path: string,
  options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
) => Promise<CallResult<T>>;

export interface ConnectionsPlatform {
  platform: Platform;
  url: string;
  connections: ConnectionsService;
  bus: MemoryBus;
  ownerToken: string;
  orgId: string;
  projectId: string;
  /** Org A tokens by role: admin (project admin), member (project developer), viewer. */
  adminToken: string;
  memberToken: string;
  viewerToken: string;
  otherOrgId: string;
  otherProjectId: string;
  /** An admin token of organization B. */
  otherToken: string;
  call: Call;
  close(): Promise<void>;
}

function caller(url: string, defaultToken: () => string): Call {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? defaultToken() : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] ??= "application/json";
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    }
    const res = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let json: unknown = {};
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = { text };
    }
    return { status: res.status, headers: res.headers, body: json as never };
  };
}

/**
 * The all-in-one platform (gateway, tenancy, connections and the rest in one process) on the test
 * Postgres, with two organizations, a project in each and tokens of several roles.
 */
export async function startConnectionsPlatform(
  options: { env?: Record<string, string>; database?: { db: Database; url: string }; logger?: Logger } = {},
): Promise<ConnectionsPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), "platform-conn-"));
  const ownerToken = `boot_${randomBytes(24).toString("hex")}`;
  const env = AllInOneEnvSchema.parse({
    PORT: "0",
    HOST: "127.0.0.1",
    AGENTPLANE_DATA_DIR: dataDir,
    AGENTPLANE_BOOTSTRAP_TOKEN: ownerToken,
    AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
    AGENT_RUNTIME: "off",
    LOG_LEVEL: "silent",
    ...options.env,
  });
  let testDb: TestDatabase | undefined;
  let database: Database;
  if (options.database) database = options.database.db;
  else {
    testDb = await createTestDatabase("conn");
    database = await openDatabase(testDb.url);
  }
  const bus = new MemoryBus();
  // CONNECTIONS_TEST_LOG=debug shows the platform's log while a suite runs.
  const logger =
    options.logger ??
    (process.env.CONNECTIONS_TEST_LOG ? createLogger("test", process.env.CONNECTIONS_TEST_LOG) : silentLogger());
  const platform = await assemblePlatform({ env, dataDir, database, bus, logger });
  const url = platform.url.replace("0.0.0.0", "127.0.0.1");
  const call = caller(url, () => ownerToken);
  const created = async <T = { id: string }>(path: string, body: unknown, token?: string): Promise<T> => {
    const r = await call<T>("POST", path, { body, ...(token ? { token } : {}) });
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const org = await created("/v1/orgs", { name: "Acme" });
  const project = await created(`/v1/orgs/${org.id}/projects`, { name: "payments" });
  const otherOrg = await created("/v1/orgs", { name: "Globex" });
  const otherProject = await created(`/v1/orgs/${otherOrg.id}/projects`, { name: "rival" });
  const token = async (orgId: string, role: string) =>
    (await created<{ token: string }>(`/v1/orgs/${orgId}/api-tokens`, { name: role, role })).token;
  const connections = platform.services.connections as ConnectionsService;
  return {
    platform,
    url,
    connections,
    bus,
    ownerToken,
    orgId: org.id,
    projectId: project.id,
    adminToken: await token(org.id, "admin"),
    memberToken: await token(org.id, "member"),
    viewerToken: await token(org.id, "viewer"),
    otherOrgId: otherOrg.id,
    otherProjectId: otherProject.id,
    otherToken: await token(otherOrg.id, "admin"),
    call,
    async close() {
      await platform.close();
      await bus.close();
      if (!options.database) await database.close();
      await testDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RelayProcess {
  child: ChildProcess;
  tokenFile: string;
  output(): string;
  stop(): Promise<void>;
}

const RELAY_MAIN = fileURLToPath(new URL("../../cluster-relay/src/main.ts", import.meta.url));

/** The relay as its own process, as it runs in a cluster: env, a token file and a kubeconfig. */
export function startRelayProcess(args: {
  url: string;
  clusterId: string;
  tunnelToken: string;
  kubeconfig: string;
  heartbeatMs?: number;
}): RelayProcess {
  const dir = mkdtempSync(join(tmpdir(), "relay-"));
  const tokenFile = join(dir, "token");
  const kubeconfigFile = join(dir, "kubeconfig");
  writeFileSync(tokenFile, `${args.tunnelToken}\n`, { mode: 0o600 });
  writeFileSync(kubeconfigFile, args.kubeconfig);
  const child = spawn(process.execPath, [RELAY_MAIN], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      AGENTPLANE_URL: args.url,
      CLUSTER_ID: args.clusterId,
      TUNNEL_TOKEN_FILE: tokenFile,
      KUBECONFIG: kubeconfigFile,
      HEARTBEAT_MS: String(args.heartbeatMs ?? 1000),
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  return {
    child,
    tokenFile,
    output: () => out,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  what = "condition",
): Promise<T> {
  const start = Date.now();
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch {
      // Not yet: ask again.
    }
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
