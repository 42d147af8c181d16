import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import type { AuditRecorded, UsageRecorded } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import type { Bus } from "@agentplane/events";
import { type Authorizer, generateInternalKeys, silentLogger } from "@agentplane/service-kit";
import { type AuditService, createAuditService } from "../src/app.ts";
import type { AuditConfig } from "../src/config.ts";

export function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = async () => {
      try {
        if (await check()) return resolve();
      } catch {
        // the condition may touch a service that is briefly unavailable; ask again
      }
      if (Date.now() - start > timeoutMs) return reject(new Error("timed out"));
      setTimeout(tick, 50);
    };
    void tick();
  });
}

let seq = 0;
export function auditEvent(overrides: Partial<AuditRecorded> = {}): AuditRecorded {
  seq++;
  return {
    id: `evt-${process.pid}-${Date.now().toString(36)}-${seq}`,
    orgId: "org_a",
    principal: { type: "user", id: "usr_1", displayName: "Ada" },
    action: "createProject",
    source: "request",
    targetType: "project",
    targetId: `prj_${seq}`,
    targets: {},
    outcome: "success",
    status: 201,
    time: new Date().toISOString(),
    ...overrides,
  };
}

export function usageEvent(overrides: Partial<UsageRecorded> = {}): UsageRecorded {
  seq++;
  return {
    id: `use-${process.pid}-${Date.now().toString(36)}-${seq}`,
    orgId: "org_a",
    projectId: "prj_1",
    principalType: "user",
    principalId: "usr_1",
    provider: "anthropic",
    model: "claude-sonnet-4-5-20250929",
    route: "/v1/llm/anthropic/v1/messages",
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    time: new Date().toISOString(),
    ...overrides,
  };
}

/** Authorizes nobody: for suites that call the service's verbs directly rather than its routes. */
export const noRoutes: Authorizer = {
  check: async () => ({ decision: "not_found" }),
};

export async function startAudit(
  database: Database,
  bus: Bus,
  config: AuditConfig = {},
  authorizer: Authorizer = noRoutes,
): Promise<AuditService> {
  const keys = await generateInternalKeys();
  return createAuditService({
    database,
    bus,
    keys,
    logger: silentLogger(),
    authorizer,
    config: { maintenance: false, ...config },
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A redis-server owned by one suite, so it can be stopped and started without touching others. */
export class OwnRedis {
  port = 0;
  private child: ChildProcess | undefined;
  /** With a directory, Redis keeps an fsync-always append-only file there, as a BullMQ Redis should. */
  private readonly dir: string | undefined;

  constructor(options: { dir?: string } = {}) {
    this.dir = options.dir;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    const persistence = this.dir
      ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", this.dir]
      : ["--appendonly", "no"];
    const child = spawn("redis-server", ["--port", String(this.port), "--save", "", ...persistence], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("Ready to accept connections")) resolve();
      });
      child.once("exit", () => reject(new Error("redis-server exited")));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise((resolve) => {
      child.once("exit", resolve);
      child.kill("SIGKILL");
    });
  }
}
