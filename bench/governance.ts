// Decision API latency and throughput with 1, 10 and 100 bound policies covering sandbox:exec,
// against a no-op decision measured in the same run: in process (the engine as the service calls
// it, and the service app through its in-process client) and over HTTP (keep-alive, one request at
// a time for latency, 10 in flight for throughput). "unique" requests differ in their argv every
// time, so no answer comes from the memo of identical requests; "repeated" ones are identical.
// Run: node scripts/bootstrap.mjs node bench/governance.ts   (BENCH_ROUNDS=2000 by default)
import { randomBytes } from "node:crypto";
import { type DecisionRequest, internalDecideRoute } from "@agentplane/contracts";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import {
  createServiceApp,
  generateInternalKeys,
  httpFetch,
  inProcessFetch,
  ServiceClient,
  serveFetch,
  silentLogger,
} from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { createGovernanceService } from "../apps/governance-svc/src/app.ts";
import { decide } from "../apps/governance-svc/src/services/decisions.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2000);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
const us = (ms: number) => `${(ms * 1000).toFixed(0).padStart(6)} µs`;

// Postgres when it is running (fast to open), otherwise an in-memory PGlite; decisions never read it.
const pg = await requirePostgres();
const created = pg.available ? await createTestDatabase("bench_gov") : undefined;
const database = await openDatabase(created?.url ?? "pglite://memory");
const keys = await generateInternalKeys();
const bus = new MemoryBus();
const ORG = "org_bench";
const authorizer = {
  check: async (r: { projectId?: string }) => ({
    decision: "allowed" as const,
    orgId: ORG,
    ...(r.projectId ? { projectId: r.projectId } : {}),
    orgRole: "owner" as const,
  }),
};
const service = await createGovernanceService({
  database,
  bus,
  keys,
  logger: silentLogger(),
  authorizer,
  config: { secretKey: randomBytes(32), driftIntervalMs: 0 },
});
const client = new ServiceClient("governance", inProcessFetch(service), keys);
const server = await serveFetch(service.fetch, { port: 0, hostname: "127.0.0.1" });
const remote = new ServiceClient("governance", httpFetch(server.url, { connections: 16 }), keys);

// The baseline over HTTP: a service app with the same middleware answering a constant decision.
const noop = createServiceApp({ name: "governance", keys });
const NOOP_ANSWER = { decision: "allow", enforced: true, reasons: [], evaluatedAt: new Date(0).toISOString() };
noop.post(internalDecideRoute.path, async (c) => c.json(NOOP_ANSWER, 200));
const noopServer = await serveFetch(noop.fetch, { port: 0, hostname: "127.0.0.1" });
const noopRemote = new ServiceClient("governance", httpFetch(noopServer.url, { connections: 16 }), keys);
const noopLocal = new ServiceClient("governance", inProcessFetch(noop), keys);

const admin = { type: "user" as const, id: "usr_bench", orgId: ORG };
const svc = { type: "service" as const, id: "svc_sandbox" };
// Every "unique" request of the whole run differs (a memo hit would flatter the figures).
let sequence = 0;
const request = (project: string, i: number | undefined): DecisionRequest => ({
  principal: { type: "sandbox", id: "sbt_bench", orgId: ORG, projectId: project },
  action: "sandbox:exec",
  resource: { type: "Sandbox", id: "sbx_bench", orgId: ORG, projectId: project, labels: {}, kind: "sandbox" },
  context: { argv: i === undefined ? ["git", "status"] : ["git", "status", String(sequence++)], tty: false },
});

async function time(rounds: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(200, rounds); i++) await fn(-1 - i);
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

/** Two calls per round, alternating, so the machine's load falls on both alike. */
async function paired(
  rounds: number,
  base: (i: number) => Promise<unknown>,
  measured: (i: number) => Promise<unknown>,
): Promise<[number[], number[]]> {
  for (let i = 0; i < Math.min(200, rounds); i++) {
    await base(-1 - i);
    await measured(-1 - i);
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    await base(i);
    a.push(performance.now() - t);
    t = performance.now();
    await measured(i);
    b.push(performance.now() - t);
  }
  return [a, b];
}

async function throughput(seconds: number, inFlight: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let n = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) await fn(n++);
    }),
  );
  return n / seconds;
}

const line = (label: string, xs: number[], base?: number[]) =>
  console.log(
    `${label.padEnd(44)} p50 ${us(pct(xs, 0.5))}  p99 ${us(pct(xs, 0.99))}${base ? `  ×${(pct(xs, 0.5) / pct(base, 0.5)).toFixed(1)} of no-op` : ""}`,
  );

const noopLocalCall = (i: number) =>
  noopLocal.request("POST", internalDecideRoute.path, { principal: svc, body: request("prj_0", i) });
const noopHttpCall = (i: number) =>
  noopRemote.request("POST", internalDecideRoute.path, { principal: svc, body: request("prj_0", i) });
const baseFn = await time(ROUNDS, async () => NOOP_ANSWER);
console.log(`baseline no-op decision function: p50 ${us(pct(baseFn, 0.5))}  p99 ${us(pct(baseFn, 0.99))}`);

for (const count of [1, 10, 100]) {
  const project = `prj_${count}`;
  for (let i = 0; i < count; i++) {
    // Policy 0 permits git; the others permit other programs, so every statement is looked at.
    const cedar =
      i === 0
        ? '@id("git") permit(principal, action == Action::"sandbox:exec", resource) when { context.program == "git" };'
        : `@id("tool-${i}") permit(principal, action == Action::"sandbox:exec", resource) when { context.program == "tool-${i}" && !context.tty };`;
    const policy = await client.request<{ id: string }>("POST", `/v1/projects/${project}/policies`, {
      principal: admin,
      body: { name: `policy-${i}`, cedar },
    });
    await client.request("POST", `/v1/projects/${project}/policy-bindings`, {
      principal: admin,
      body: { policyId: policy.id },
    });
  }
  const check = async (answer: Promise<{ decision: string }>) => {
    if ((await answer).decision !== "allow") throw new Error("expected allow");
  };
  console.log(`\n${count} bound ${count === 1 ? "policy" : "policies"} covering sandbox:exec`);
  const engineUnique = await time(ROUNDS, (i) => check(decide(service.context, request(project, i))));
  const engineRepeated = await time(ROUNDS, () => check(decide(service.context, request(project, undefined))));
  const [baseLocal, appUnique] = await paired(ROUNDS, noopLocalCall, (i) =>
    check(client.request("POST", internalDecideRoute.path, { principal: svc, body: request(project, i) })),
  );
  const [baseHttp, httpUnique] = await paired(ROUNDS / 2, noopHttpCall, (i) =>
    check(remote.request("POST", internalDecideRoute.path, { principal: svc, body: request(project, i) })),
  );
  const baseRps = await throughput(2, 10, noopHttpCall);
  const rps = await throughput(2, 10, (i) =>
    check(remote.request("POST", internalDecideRoute.path, { principal: svc, body: request(project, i) })),
  );
  line("  in process, decision verb, unique", engineUnique);
  line("  in process, decision verb, repeated", engineRepeated);
  line("  no-op, service app + client", baseLocal);
  line("  in process, service app + client, unique", appUnique, baseLocal);
  line("  no-op, over HTTP", baseHttp);
  line("  over HTTP, unique", httpUnique, baseHttp);
  console.log(
    `  over HTTP, 10 in flight, unique: ${rps.toFixed(0)} req/s (${((rps / baseRps) * 100).toFixed(0)}% of no-op)`,
  );
}

await server.close();
await noopServer.close();
await service.close();
await bus.close();
await database.close();
await created?.drop();
