import { existsSync, readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { DecisionRequest } from "@agentplane/contracts";
import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { MemoryBus, outboxMigrations } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import { type Caller, generateInternalKeys, ServiceClient, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { type SandboxRuntimeSpec, StartWithdrawnError } from "../src/driver/types.ts";
import type { SandboxDeps } from "../src/services/context.ts";
import { createSandbox } from "../src/services/create.ts";
import { listSandboxes } from "../src/services/sandboxes.ts";
import { newDriver, requireBwrap } from "./helpers.ts";
import { sandboxOutbox } from "./service-fixture.ts";

// A start asked with a create is begun while it is decided: the sandbox is built meanwhile, but
// nothing of it runs until the start is admitted and counted, and nothing is left when it is not.

const bwrap = requireBwrap();

/** Writes a marker into the workspace, then idles: whether the sandbox's command ran at all. */
const MARKING = ["/bin/sh", "-c", "echo ran > /workspace/ran; exec sleep infinity"];

/**
 * The sandbox hostname (its slug) of each host process that runs in a sandbox, by pid: the driver
 * gives bwrap and everything it starts `HOSTNAME=<slug>` (bwrap's own options, which name it too,
 * are not on its command line).
 */
function sandboxHostnames(): Map<number, string> {
  const found = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const hostname = readFileSync(`/proc/${entry}/environ`, "utf8")
        .split("\0")
        .find((v) => v.startsWith("HOSTNAME="));
      if (hostname) found.set(Number(entry), hostname.slice("HOSTNAME=".length));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Host processes of the sandboxes whose hostname starts with `word`. */
function processesNaming(word: string): number[] {
  return [...sandboxHostnames()].filter(([, name]) => name.startsWith(word)).map(([pid]) => pid);
}

/** The hostnames starting with `prefix` of the sandboxes that have host processes. */
function sandboxesNamed(prefix: string): Set<string> {
  return new Set([...sandboxHostnames().values()].filter((name) => name.startsWith(prefix)));
}

async function eventually(check: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(20);
  }
  return check();
}

describe.skipIf(!bwrap.available)(`a driver start begun before it is admitted${bwrap.reason}`, () => {
  let driver: LocalDriver;
  const spec = (id: string): SandboxRuntimeSpec => ({
    id,
    slug: id.replace(/_/g, "-"),
    image: "default",
    command: MARKING,
    env: {},
    resources: { maxProcesses: 32 },
  });
  beforeAll(() => {
    driver = newDriver();
  });
  afterAll(() => driver.close());

  it("builds the sandbox but runs its command only once admitted", async () => {
    const admitted = Promise.withResolvers<void>();
    const started = driver.start(spec("sbx_held"), { admitted: admitted.promise });
    let settled = false;
    void started.finally(() => {
      settled = true;
    });
    // bwrap builds the sandbox meanwhile (its processes carry its hostname).
    expect(await eventually(() => processesNaming("sbx-held").length > 0)).toBe(true);
    await sleep(300);
    expect(settled).toBe(false);
    expect(existsSync(`${driver.workspaceDir("sbx_held")}/ran`)).toBe(false);
    expect((await driver.status("sbx_held")).phase).toBe("starting");
    admitted.resolve();
    await started;
    expect(await eventually(() => existsSync(`${driver.workspaceDir("sbx_held")}/ran`))).toBe(true);
    await driver.stop("sbx_held");
  });

  it("undoes a start that is not admitted: its command never ran and none of its processes is left", async () => {
    const admitted = Promise.withResolvers<void>();
    const started = driver.start(spec("sbx_refused"), { admitted: admitted.promise });
    expect(await eventually(() => processesNaming("sbx-refused").length > 0)).toBe(true);
    admitted.reject(new Error("refused"));
    await expect(started).rejects.toBeInstanceOf(StartWithdrawnError);
    expect(processesNaming("sbx-refused")).toEqual([]);
    expect((await driver.status("sbx_refused")).phase).toBe("stopped");
    expect(existsSync(`${driver.workspaceDir("sbx_refused")}/ran`)).toBe(false);
    // The same sandbox starts afterwards, in cgroups of its own again.
    await driver.start(spec("sbx_refused"));
    expect(await eventually(() => existsSync(`${driver.workspaceDir("sbx_refused")}/ran`))).toBe(true);
    await driver.stop("sbx_refused");
  });

  it("refuses at once a start whose admission failed before it began", async () => {
    await expect(driver.start(spec("sbx_early"), { admitted: Promise.reject(new Error("no")) })).rejects.toBeInstanceOf(
      StartWithdrawnError,
    );
    expect(processesNaming("sbx-early")).toEqual([]);
    expect(existsSync(`${driver.workspaceDir("sbx_early")}/ran`)).toBe(false);
  });
});

describe.skipIf(!bwrap.available)(`a create with start: true under policy${bwrap.reason}`, () => {
  let database: Database;
  let deps: SandboxDeps;
  let driver: LocalDriver;
  const actor: Caller = { principal: { type: "user", id: "usr_1" }, orgId: "org_1" };
  /** The actions asked, in order, and which of them governance denies (after `delayMs`). */
  const asked: string[] = [];
  const policy = { deny: new Set<string>(), delayMs: 0 };

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
    const keys = await generateInternalKeys();
    const bus = new MemoryBus();
    driver = newDriver();
    // Governance's decision API as it answers: allow, or an enforced deny naming its rule.
    const decisions = async (request: Request): Promise<Response> => {
      const body = (await request.json()) as DecisionRequest;
      asked.push(body.action);
      await sleep(policy.delayMs);
      const deny = policy.deny.has(body.action);
      const reason = { policyId: "pol_1", version: 1, ruleId: "held", bindingId: "pb_1", mode: "enforce" };
      return Response.json({
        decision: deny ? "deny" : "allow",
        enforced: deny,
        reasons: deny ? [{ ...reason, forbid: true }] : [],
        evaluatedAt: new Date().toISOString(),
      });
    };
    deps = {
      db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
      database,
      bus,
      ...sandboxOutbox(database, bus),
      driver,
      authorizer: { check: () => Promise.reject(new Error("verbs do not authorize")) },
      logger: silentLogger(),
      config: {},
      governance: new ServiceClient("governance", decisions, keys),
    };
  });
  afterAll(async () => {
    await driver.close();
    await deps.outbox.stop();
    await database.close();
  });

  const create = (name: string) =>
    createSandbox(deps, actor, { projectId: "prj_1", name, labels: {}, command: MARKING, start: true });
  const named = async (name: string) =>
    (await listSandboxes(deps, "prj_1", { limit: 50 })).items.find((s) => s.name === name);

  it("a refused start leaves the sandbox created pending, with no process or workspace", async () => {
    asked.length = 0;
    policy.deny = new Set(["sandbox:start"]);
    policy.delayMs = 100;
    const err = await create("start-refused").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ status: 403, extensions: { action: "sandbox:start", ruleId: "held" } });
    expect(asked).toEqual(["sandbox:create", "sandbox:start"]);
    const row = await named("start-refused");
    expect(row?.state).toBe("pending");
    expect(row?.platform_token_id).toBeNull();
    expect((await driver.status(row?.id as string)).phase).toBe("stopped");
    expect(processesNaming(row?.slug as string)).toEqual([]);
    expect(existsSync(driver.workspaceDir(row?.id as string))).toBe(false);
  });

  it("a refused create writes nothing, leaves nothing, and its start is never asked", async () => {
    asked.length = 0;
    policy.deny = new Set(["sandbox:create"]);
    policy.delayMs = 100;
    const err = await create("create-refused").catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403, extensions: { action: "sandbox:create" } });
    expect(asked).toEqual(["sandbox:create"]);
    expect(await named("create-refused")).toBeUndefined();
    expect(processesNaming("create-refused").length).toBe(0);
  });

  it("builds at most `earlyStarts` sandboxes at once before they are decided", async () => {
    policy.deny = new Set(["sandbox:start"]);
    policy.delayMs = 150;
    deps.config.earlyStarts = 2;
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, sandboxesNamed("burst-").size);
        await sleep(2);
      }
    })();
    try {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => create(`burst-${i}`).catch((e: unknown) => e)),
      );
      for (const answer of answers) expect(answer).toMatchObject({ status: 403 });
    } finally {
      sampling = false;
      await sampler;
      delete deps.config.earlyStarts;
    }
    // Some were begun before their decision, never more than two at once.
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
    const rows = (await listSandboxes(deps, "prj_1", { limit: 50 })).items.filter((r) => r.name.startsWith("burst-"));
    expect(rows.map((r) => r.state)).toEqual(Array(6).fill("pending"));
    expect(sandboxesNamed("burst-").size).toBe(0);
  });

  it("an admitted start runs the command once decided, and answers running", async () => {
    policy.deny = new Set();
    policy.delayMs = 50;
    const row = await create("admitted");
    expect(row.state).toBe("running");
    expect(await eventually(() => existsSync(`${driver.workspaceDir(row.id)}/ran`))).toBe(true);
    expect((await named("admitted"))?.state).toBe("running");
  });
});
