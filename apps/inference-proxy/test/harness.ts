import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { type Bus, MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, type TestDatabase } from "@agentplane/testkit";
// The launcher depends on this package, so the end-to-end harness reaches it by path.
import { assemblePlatform, type Platform } from "../../platform/src/assemble.ts";
import { type AllInOneEnv, AllInOneEnvSchema } from "../../platform/src/config.ts";
import type { InferenceConfig, ProviderSettings } from "../src/config.ts";

export interface CallResult<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export interface InferencePlatform {
  platform: Platform;
  env: AllInOneEnv;
  dataDir: string;
  url: string;
  ownerToken: string;
  orgId: string;
  projectId: string;
  /** Admin of organization A, not restricted to a project: its only project is `projectId`. */
  adminToken: string;
  /** Restricted to `projectId`. */
  projectToken: string;
  otherOrgId: string;
  otherProjectId: string;
  /** Admin token of organization B. */
  otherToken: string;
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown },
  ): Promise<CallResult<T>>;
  /** Writes the usage events the audit service has buffered, now. */
  drainUsage(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The all-in-one control plane (on a fresh Postgres database, in-memory bus) with the given providers, two
 * organizations with a project each, an org admin token, a project token and a foreign token.
 */
export async function startInferencePlatform(
  providers: Partial<ProviderSettings>,
  extra: Partial<InferenceConfig> = {},
  options: { database?: Database; bus?: Bus } = {},
): Promise<InferencePlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), "inference-"));
  const ownerToken = `boot_${randomBytes(24).toString("hex")}`;
  const env = AllInOneEnvSchema.parse({
    PORT: "0",
    HOST: "127.0.0.1",
    AGENTPLANE_DATA_DIR: dataDir,
    AGENTPLANE_BOOTSTRAP_TOKEN: ownerToken,
    AGENT_RUNTIME: "off",
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "100000",
  });
  // Postgres (a database per suite): the whole control plane migrates in seconds there.
  let own: TestDatabase | undefined;
  if (!options.database) own = await createTestDatabase("inference");
  const database = options.database ?? (await openDatabase((own as TestDatabase).url));
  const bus = options.bus ?? new MemoryBus();
  const platform = await assemblePlatform({
    env,
    dataDir,
    database,
    bus,
    logger: silentLogger(),
    inference: { providers: { cloudARegion: "us-east-1", ...providers }, ...extra },
  });
  const url = platform.url.replace("0.0.0.0", "127.0.0.1");
  const call: InferencePlatform["call"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = {};
    const token = opts.token === undefined ? ownerToken : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers["content-type"] = "application/json";
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
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
  const created = <T>(r: CallResult<T>, what: string): T => {
    if (r.status !== 201) throw new Error(`creating ${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const org = created(await call<{ id: string }>("POST", "/v1/orgs", { body: { name: "Acme" } }), "org");
  const project = created(
    await call<{ id: string }>("POST", `/v1/orgs/${org.id}/projects`, { body: { name: "agents" } }),
    "project",
  );
  const otherOrg = created(await call<{ id: string }>("POST", "/v1/orgs", { body: { name: "Globex" } }), "org");
  const otherProject = created(
    await call<{ id: string }>("POST", `/v1/orgs/${otherOrg.id}/projects`, { body: { name: "rival" } }),
    "project",
  );
  const token = async (orgId: string, body: Record<string, unknown>) =>
    created(await call<{ token: string }>("POST", `/v1/orgs/${orgId}/api-tokens`, { body }), "token").token;
  const adminToken = await token(org.id, { name: "admin", role: "admin" });
  const projectToken = await token(org.id, { name: "agent", role: "member", projectId: project.id });
  const otherToken = await token(otherOrg.id, { name: "rival", role: "admin" });
  const audit = platform.services.audit as unknown as { drain(): Promise<void> };

  return {
    platform,
    env,
    dataDir,
    url,
    ownerToken,
    orgId: org.id,
    projectId: project.id,
    adminToken,
    projectToken,
    otherOrgId: otherOrg.id,
    otherProjectId: otherProject.id,
    otherToken,
    call,
    drainUsage: async () => {
      // The proxy's outbox relays on its own schedule; give it a moment, then flush the consumer.
      await new Promise((r) => setTimeout(r, 400));
      await audit.drain();
    },
    async close() {
      await platform.close();
      if (!options.bus) await bus.close();
      if (!options.database) {
        await database.close();
        await own?.drop();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until `check` holds (polling), or fails with `what`. */
export async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000) {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A clock for the proxy's "no limit applies here" trust: frozen until a test moves it, e.g. past
 * the trust (1 s) right after creating a limit, so the next call asks audit again.
 */
export function manualClock(): { now(): number; advance(ms: number): void } {
  let t = 0;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
  };
}
