// What the governance check adds to a sandbox exec: the same sandbox, `true` exec'd with no policy
// check (the baseline, in the same run) and with governance-svc asked in process, 10 policies bound
// to the project and covering sandbox:exec. Run: node scripts/bootstrap.mjs node bench/sandbox-policy.ts
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { internalDecideRoute } from "@agentplane/contracts";
import { openDatabase } from "@agentplane/db";
import { MemoryBus, outboxMigrations } from "@agentplane/events";
import type { Caller } from "@agentplane/service-kit";
import { generateInternalKeys, inProcessFetch, ServiceClient, silentLogger } from "@agentplane/service-kit";
import { createGovernanceService } from "../apps/governance-svc/src/app.ts";
import { SANDBOX_SCHEMA } from "../apps/sandbox-svc/src/app.ts";
import { migrations } from "../apps/sandbox-svc/src/db/migrations/index.ts";
import { LocalDriver } from "../apps/sandbox-svc/src/driver/local/local-driver.ts";
import type { SandboxDeps } from "../apps/sandbox-svc/src/services/context.ts";
import { createSandbox } from "../apps/sandbox-svc/src/services/create.ts";
import { execInSandbox } from "../apps/sandbox-svc/src/services/exec.ts";
import { getSandboxRow } from "../apps/sandbox-svc/src/services/sandboxes.ts";
import { migrateToLatest } from "../packages/db/src/migrate.ts";
import { sandboxDeps } from "./sandbox-deps.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 150);
const POLICIES = 10;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
const ms = (x: number) => `${x.toFixed(2)} ms`;

const ORG = "org_bench";
const P = "prj_bench";
const dataDir = mkdtempSync(join(tmpdir(), "bench-sandbox-policy-"));
const database = await openDatabase("pglite://memory");
await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
const logger = silentLogger();
const bus = new MemoryBus();
const keys = await generateInternalKeys();
// Route authorization is not what is measured: the admin here may do anything in its one project.
const authorizer = {
  check: async () => ({ decision: "allowed" as const, orgId: ORG, projectId: P, orgRole: "owner" as const }),
};
const governanceService = await createGovernanceService({
  database,
  bus,
  keys,
  logger,
  authorizer,
  config: { secretKey: randomBytes(32), driftIntervalMs: 0 },
});
const governance = new ServiceClient("governance", inProcessFetch(governanceService), keys);
const admin = { type: "user" as const, id: "usr_bench", orgId: ORG };
for (let i = 0; i < POLICIES; i++) {
  const cedar =
    i === 0
      ? '@id("run-true")\npermit(principal, action == Action::"sandbox:exec", resource) when { context.program == "true" };'
      : `@id("tool-${i}")\npermit(principal, action == Action::"sandbox:exec", resource) when { context.program == "tool-${i}" && !context.tty };`;
  const policy = await governance.request<{ id: string }>("POST", `/v1/projects/${P}/policies`, {
    principal: admin,
    body: { name: `policy-${i}`, cedar },
  });
  await governance.request("POST", `/v1/projects/${P}/policy-bindings`, {
    principal: admin,
    body: { policyId: policy.id },
  });
}

const driver = new LocalDriver({ dataDir, logger });
const base = sandboxDeps(database, bus, driver, logger);
const governed: SandboxDeps = { ...base, governance };
const actor: Caller = { principal: admin, orgId: ORG };
const row = await createSandbox(base, actor, { projectId: P, name: "bench", labels: {}, start: true });
const live = await getSandboxRow(base, P, row.id);

// The decision alone, as sandbox-svc asks it (in process, through the service client).
const decision = {
  principal: admin,
  action: "sandbox:exec",
  resource: { type: "Sandbox", id: live.id, orgId: ORG, projectId: P, labels: {}, kind: "sandbox" },
  context: { argv: ["true"], command: "true", tty: false },
};
const decideTimes: number[] = [];
for (let i = 0; i < ROUNDS * 4; i++) {
  const t = performance.now();
  const answer = await governance.request<{ decision: string }>("POST", internalDecideRoute.path, {
    principal: { type: "service", id: "svc_sandbox" },
    body: { ...decision, context: { ...decision.context, argv: ["true", String(i)] } },
  });
  decideTimes.push(performance.now() - t);
  if (answer.decision !== "allow") throw new Error(`expected allow, got ${JSON.stringify(answer)}`);
}

// Exec round trips, interleaved so load on the machine affects both alike. Distinct arguments
// each time, so no decision is answered from governance's memo of identical requests.
const plain: number[] = [];
const checked: number[] = [];
for (let i = 0; i < 10; i++) {
  await execInSandbox(base, actor, { command: ["true"], timeoutMs: 5000, sandbox: live });
  await execInSandbox(governed, actor, { command: ["true", `warm-${i}`], timeoutMs: 5000, sandbox: live });
}
for (let i = 0; i < ROUNDS; i++) {
  let t = performance.now();
  await execInSandbox(base, actor, { command: ["true", String(i)], timeoutMs: 5000, sandbox: live });
  plain.push(performance.now() - t);
  t = performance.now();
  const r = await execInSandbox(governed, actor, { command: ["true", String(i)], timeoutMs: 5000, sandbox: live });
  checked.push(performance.now() - t);
  if (r.exitCode !== 0) throw new Error("exec failed");
}
const overhead = pct(checked, 0.5) / pct(plain, 0.5) - 1;
console.log(
  `decision (in process, ${POLICIES} bound policies): p50 ${ms(pct(decideTimes, 0.5))}  p95 ${ms(pct(decideTimes, 0.95))}`,
);
console.log(
  `exec true: with policy check p50 ${ms(pct(checked, 0.5))}  p95 ${ms(pct(checked, 0.95))} | no check p50 ${ms(pct(plain, 0.5))}  p95 ${ms(pct(plain, 0.95))}  overhead p50 ${(overhead * 100).toFixed(1)}%  (aim < 10%)`,
);

await base.outbox.stop();
await driver.close();
await governanceService.close();
await bus.close();
await database.close();
rmSync(dataDir, { recursive: true, force: true });
