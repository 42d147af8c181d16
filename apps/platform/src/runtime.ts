import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startRuntime } from "@agentplane/agent-runtime";
import { internalResolveApiTokenRoute, type Principal } from "@agentplane/contracts";
import { callInternal, inProcessFetch, type Logger, ServiceClient, servicePrincipal } from "@agentplane/service-kit";
import type { TenancyService } from "@agentplane/tenancy-svc";
import type { Platform } from "./assemble.ts";
import type { AllInOneEnv } from "./config.ts";
import { loadOrCreateSecretKey } from "./secrets.ts";

/** Model credentials stay with the control plane: the local runtime reaches models through the gateway. */
const PROVIDER_CREDENTIALS = [
  "CLOUD_A_BEARER_TOKEN",
  "CLOUD_A_ACCESS_KEY_ID",
  "CLOUD_A_SECRET_ACCESS_KEY",
  "CLOUD_A_SESSION_TOKEN",
  "CLOUD_B_API_KEY",
];
const IDENTITY_FILE = "agent-runtime-identity.json";
const PROJECT_NAME = "agent";
/** The runtime's token calls models and nothing else. */
const RUNTIME_SCOPES = ["llm:invoke"];

export interface RuntimeIdentity {
  orgId: string;
  projectId: string;
  token: string;
}

interface StoredIdentity {
  orgId: string;
  projectId: string;
  iv: string;
  tag: string;
  token: string;
}

function encrypt(key: Buffer, text: string): { iv: string; tag: string; token: string } {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const data = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return { iv: iv.toString("base64"), tag: cipher.getAuthTag().toString("base64"), token: data.toString("base64") };
}

function decrypt(key: Buffer, s: StoredIdentity): string {
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(s.iv, "base64"));
  decipher.setAuthTag(Buffer.from(s.tag, "base64"));
  return Buffer.concat([decipher.update(Buffer.from(s.token, "base64")), decipher.final()]).toString("utf8");
}

/**
 * The runtime's own identity on this control plane: a project (named by AGENT_RUNTIME_PROJECT_ID,
 * else `agent` in the first organization) and an API token restricted to it and to the one scope
 * `llm:invoke` (model calls through /v1/llm/**; every other route answers 403), with the member
 * cap. The token is kept encrypted with the installation's secret key in the data dir and reused
 * across restarts while it still resolves with that restriction; one that does not is revoked and
 * replaced.
 * Undefined while the installation is not activated (there is no owner to act for yet).
 */
export async function provisionRuntimeIdentity(options: {
  platform: Platform;
  env: AllInOneEnv;
  rawEnv: Record<string, string | undefined>;
  dataDir: string;
}): Promise<RuntimeIdentity | undefined> {
  const { platform, dataDir } = options;
  const tenancy = platform.services.tenancy as TenancyService | undefined;
  if (!tenancy) return undefined;
  const db = tenancy.context.db;
  const installation = await db.selectFrom("installation").select("status").executeTakeFirst();
  if (installation?.status !== "activated") return undefined;
  const key = loadOrCreateSecretKey(dataDir, options.env.AGENTPLANE_SECRET_KEY);
  const client = new ServiceClient("tenancy", inProcessFetch(tenancy), platform.keys);
  const file = join(dataDir, IDENTITY_FILE);
  const wantedProject = options.rawEnv.AGENT_RUNTIME_PROJECT_ID;

  let stale: { id: string; userId: string } | undefined;
  if (existsSync(file)) {
    try {
      const stored = JSON.parse(readFileSync(file, "utf8")) as StoredIdentity;
      const token = decrypt(key, stored);
      const resolved = await callInternal(client, internalResolveApiTokenRoute, {
        principal: servicePrincipal("platform"),
        body: { token },
      });
      const scoped = resolved.principal.scopes?.join(",") === RUNTIME_SCOPES.join(",");
      if (scoped && (!wantedProject || wantedProject === stored.projectId)) {
        return { orgId: stored.orgId, projectId: stored.projectId, token };
      }
      // A token of an earlier version (no scope) or for another project: revoke it, mint the new one.
      if (resolved.principal.userId) stale = { id: resolved.principal.id, userId: resolved.principal.userId };
    } catch {
      // Revoked, expired or unreadable: provision a new one below.
    }
  }

  let orgId: string;
  let projectId: string | undefined;
  if (wantedProject) {
    const project = await db
      .selectFrom("projects")
      .select(["id", "org_id"])
      .where("id", "=", wantedProject)
      .executeTakeFirst();
    if (!project) throw new Error(`AGENT_RUNTIME_PROJECT_ID ${wantedProject} is not a project of this installation`);
    orgId = project.org_id;
    projectId = project.id;
  } else {
    const org = await db.selectFrom("orgs").select("id").orderBy("created_at").orderBy("id").executeTakeFirst();
    if (!org) return undefined;
    orgId = org.id;
  }
  const owner = await db
    .selectFrom("org_members")
    .innerJoin("users", "users.id", "org_members.user_id")
    .select(["org_members.user_id", "users.display_name", "users.email"])
    .where("org_members.org_id", "=", orgId)
    .where("org_members.role", "=", "owner")
    .orderBy("org_members.created_at")
    .executeTakeFirst();
  if (!owner) return undefined;
  // The launcher acts for the organization's owner, as the owner would through the API, under the
  // owner's name, so the audit trail shows who rather than an id.
  const ownerName = owner.display_name ?? owner.email;
  const principal: Principal = { type: "user", id: owner.user_id, ...(ownerName ? { displayName: ownerName } : {}) };
  if (!projectId) {
    const existing = await db
      .selectFrom("projects")
      .select("id")
      .where("org_id", "=", orgId)
      .where("name", "=", PROJECT_NAME)
      .executeTakeFirst();
    projectId =
      existing?.id ??
      (
        await client.request<{ id: string }>("POST", `/v1/orgs/${orgId}/projects`, {
          principal,
          body: { name: PROJECT_NAME, description: "The local agent runtime's model calls" },
        })
      ).id;
  }
  const created = await client.request<{ token: string }>("POST", `/v1/orgs/${orgId}/api-tokens`, {
    principal,
    body: { name: "agent-runtime", role: "member", projectId, scopes: RUNTIME_SCOPES },
  });
  if (stale) {
    await client
      .request("DELETE", `/v1/api-tokens/${encodeURIComponent(stale.id)}`, {
        principal: { type: "user", id: stale.userId },
      })
      .catch(() => undefined);
  }
  const stored: StoredIdentity = { orgId, projectId, ...encrypt(key, created.token) };
  writeFileSync(`${file}.tmp`, JSON.stringify(stored), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  return { orgId, projectId, token: created.token };
}

/** Which provider the runtime asks the gateway for: the one the control plane has a credential for. */
function providerFor(rawEnv: Record<string, string | undefined>): string | undefined {
  if (rawEnv.LLM_PROVIDER) return rawEnv.LLM_PROVIDER;
  if (rawEnv.CLOUD_A_BEARER_TOKEN || rawEnv.CLOUD_A_ACCESS_KEY_ID) return undefined;
  return rawEnv.CLOUD_B_API_KEY ? "cloud-b" : undefined;
}

export interface LocalRuntime {
  url: string;
  identity: RuntimeIdentity | undefined;
  close(): Promise<void>;
}

/**
 * The agent runtime next to the control plane (`npm start`), in gateway mode against it: model
 * credentials stay in the control plane, the runtime holds only its project token. Until the
 * installation is activated it runs without a token; it is restarted with one once activated.
 */
export async function startLocalRuntime(options: {
  env: AllInOneEnv;
  rawEnv: Record<string, string | undefined>;
  dataDir: string;
  publicUrl: string;
  platform: Platform;
  logger: Logger;
}): Promise<LocalRuntime> {
  const { env, rawEnv, dataDir, publicUrl } = options;
  const home = rawEnv.AGENT_HOME ?? join(dataDir, "agent");
  const base: Record<string, string | undefined> = { ...rawEnv };
  for (const name of PROVIDER_CREDENTIALS) delete base[name];
  const provider = providerFor(rawEnv);
  const launch = async (identity: RuntimeIdentity | undefined) =>
    startRuntime(
      {
        ...base,
        ...(provider ? { LLM_PROVIDER: provider } : {}),
        PORT: String(env.AGENT_RUNTIME_PORT),
        HOST: env.AGENT_RUNTIME_HOST,
        AGENT_HOME: home,
        AGENT_DATA_DIR: rawEnv.AGENT_DATA_DIR ?? home,
        DATABASE_URL: rawEnv.AGENT_DATABASE_URL ?? `file:${join(home, "agent.db")}`,
        GATEWAY_API_URL: rawEnv.GATEWAY_API_URL ?? publicUrl,
        GATEWAY_API_TOKEN: rawEnv.GATEWAY_API_TOKEN ?? identity?.token,
      },
      {
        // Before activation there is no token yet: this launcher provisions it and restarts the runtime.
        gatewayTokenPending: !rawEnv.GATEWAY_API_TOKEN && !identity,
        // The agent's local commands run beside the platform's secret key, database and sandbox
        // workspaces: none of them is theirs to read.
        hiddenPaths: [dataDir],
      },
    );
  const provision = () => provisionRuntimeIdentity({ platform: options.platform, env, rawEnv, dataDir });
  let identity = rawEnv.GATEWAY_API_TOKEN ? undefined : await provision();
  let runtime = await launch(identity);
  options.logger.debug({ url: runtime.url, projectId: identity?.projectId }, "agent runtime started");
  // The gateway fronts the runtime at /agent for the callers authorized on its project.
  const front = (projectId: string | undefined) => {
    if (projectId) options.platform.gateway.agent.connect({ url: runtime.url, projectId });
  };
  front(identity?.projectId ?? rawEnv.AGENT_RUNTIME_PROJECT_ID);

  let watcher: NodeJS.Timeout | undefined;
  let closed = false;
  if (!identity && !rawEnv.GATEWAY_API_TOKEN) {
    // Activation happens while running (device flow): provision then, and restart with the token.
    watcher = setInterval(() => {
      void (async () => {
        const next = await provision().catch(() => undefined);
        if (!next || closed) return;
        clearInterval(watcher);
        identity = next;
        await runtime.close();
        runtime = await launch(next);
        front(next.projectId);
        options.logger.info({ projectId: next.projectId }, "agent runtime restarted with its project token");
      })();
    }, 2000);
    watcher.unref();
  }
  return {
    get url() {
      return runtime.url;
    },
    get identity() {
      return identity;
    },
    async close() {
      closed = true;
      if (watcher) clearInterval(watcher);
      options.platform.gateway.agent.connect(undefined);
      await runtime.close();
    },
  };
}
