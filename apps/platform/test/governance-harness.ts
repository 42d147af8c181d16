import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

export interface Reply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export interface GovernedPlatform {
  platform: Platform;
  url: string;
  orgId: string;
  projectId: string;
  adminToken: string;
  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<Reply<T>>;
  close(): Promise<void>;
}

/**
 * The all-in-one platform (tenancy, audit, governance, sandbox and the rest behind one gateway,
 * PGlite in memory) with one organization, a project and an admin API token; `env` adds launcher
 * settings (the egress host map).
 */
export async function startGovernedPlatform(env: Record<string, string> = {}): Promise<GovernedPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), "platform-governance-"));
  const ownerToken = `boot_${randomBytes(24).toString("hex")}`;
  const parsed = AllInOneEnvSchema.parse({
    PORT: "0",
    HOST: "127.0.0.1",
    AGENTPLANE_DATA_DIR: dataDir,
    AGENTPLANE_BOOTSTRAP_TOKEN: ownerToken,
    AGENT_RUNTIME: "off",
    LOG_LEVEL: "silent",
    ...env,
  });
  const database: Database = await openDatabase("pglite://memory");
  const bus = new MemoryBus();
  const platform = await assemblePlatform({ env: parsed, dataDir, database, bus, logger: silentLogger() });
  const url = platform.url.replace("0.0.0.0", "127.0.0.1");
  let token = ownerToken;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<Reply<T>> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as T };
  };
  const created = async (r: Reply<{ id?: string; token?: string }>, what: string) => {
    if (r.status !== 201) throw new Error(`creating ${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const org = await created(await call("POST", "/v1/orgs", { name: "Acme" }), "org");
  const project = await created(await call("POST", `/v1/orgs/${org.id}/projects`, { name: "agents" }), "project");
  const admin = await created(
    await call("POST", `/v1/orgs/${org.id}/api-tokens`, { name: "admin", role: "admin" }),
    "token",
  );
  token = admin.token as string;
  return {
    platform,
    url,
    orgId: org.id as string,
    projectId: project.id as string,
    adminToken: token,
    call,
    async close() {
      await platform.close();
      await bus.close();
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Retries `probe` until `done` holds (policy changes reach decisions within 2 s; audit records arrive over the bus). */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}
