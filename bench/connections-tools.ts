// Connector tool calls: the latency a connector adds over calling the local API directly (REST
// `tools/call` and the project MCP endpoint with the SDK client, both in process, one call at a
// time), `tools/list` of a 500-tool connector (MCP and REST), and discovery of a 500-operation
// OpenAPI description (parse, validate, dereference, build tools). The baseline in the same run is
// the same GET sent straight to the local API with a keep-alive undici pool. A second replica on
// the same database asks the real governance-svc (a project policy that forbids one tool): a call
// it allows, and a call it denies (denies are never reused, so each one is a full decision).
// The call series are measured together, one call of each in turn per round, after a common
// warm-up of BENCH_WARMUP rounds: V8 needs several hundred calls before these paths run optimized
// code (the first series measured after a 50-call warm-up used to come out up to twice as slow, the
// baseline included), and measuring in turn spreads the JIT, garbage collection and the shared
// machine's load changes over every series alike. One audit INSERT committing on its own (what each
// call waits for before it answers) is measured in the same rounds as the floor of the added time.
// Run: node scripts/bootstrap.mjs node bench/connections-tools.ts   (BENCH_ROUNDS=400, BENCH_WARMUP=800)
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { openDatabase } from "@agentplane/db";
import { domainAuditRecord, enqueueAuditRecord, MemoryBus } from "@agentplane/events";
import { generateInternalKeys, IdentitySigner, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres } from "@agentplane/testkit";
import { Agent, request } from "undici";
import { createConnectionsService } from "../apps/connections-svc/src/app.ts";
import {
  buildToolsFromDocument,
  loadOpenApiDescription,
} from "../apps/connections-svc/src/connectors/openapi/index.ts";
import { governProject, startGovernance } from "../apps/connections-svc/test/connectors-fixtures/governance.ts";
import { inProcessMcpClient } from "../apps/connections-svc/test/connectors-fixtures/in-process-client.ts";
import { generateLargeDescription } from "../apps/connections-svc/test/connectors-fixtures/large-description.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 400);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 800);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
const ms = (v: number) => `${v.toFixed(3).padStart(8)} ms`;
/** Each series' call once per round, in turn (warm-up rounds first, not recorded). */
async function inTurn<K extends string>(
  rounds: number,
  warmup: number,
  series: Record<K, () => Promise<unknown>>,
): Promise<Record<K, number[]>> {
  const entries = Object.entries(series) as Array<[K, () => Promise<unknown>]>;
  const out = Object.fromEntries(entries.map(([k]) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < warmup + rounds; i++) {
    for (const [k, fn] of entries) {
      const t = performance.now();
      await fn();
      if (i >= warmup) out[k].push(performance.now() - t);
    }
  }
  return out;
}
async function timed(rounds: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(50, rounds); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

// The local API: one JSON document per account, and the 500-operation description.
const RESOURCES = 63; // 63 collections × 8 operations, plus 7 file uploads that become no tool: 511.
let port = 0;
const api = createServer((req, res) => {
  if (req.url === "/openapi.json") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(generateLargeDescription({ resources: RESOURCES, serverUrl: `http://127.0.0.1:${port}` })));
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: "acc-1", name: "First", status: "active", amount: 12 }));
});
await new Promise<void>((r) => api.listen(0, "127.0.0.1", r));
port = (api.address() as AddressInfo).port;

const pg = await requirePostgres();
const created = pg.available ? await createTestDatabase("bench_conn") : undefined;
const database = await openDatabase(created?.url ?? "pglite://memory");
const keys = await generateInternalKeys();
const principal = { type: "user" as const, id: "usr_bench" };
const authorizer = {
  check: async (r: { projectId?: string }) => ({
    decision: "allowed" as const,
    orgId: "org_bench",
    ...(r.projectId ? { projectId: r.projectId } : {}),
    projectRole: "admin" as const,
  }),
};
const bus = new MemoryBus();
const service = await createConnectionsService({
  database,
  bus,
  keys,
  logger: silentLogger(),
  authorizer,
  signer: { sign: async () => "unused" },
  config: { connectors: { allowedHosts: ["127.0.0.1"], scheduler: false } },
});
// Signed identities are reused until close to expiry, as the gateway does.
const signer = new IdentitySigner(keys);
const identity = () => signer.sign(principal, "connections");
const call = async (method: string, path: string, body?: unknown) =>
  service.fetch(
    new Request(`http://connections.bench${path}`, {
      method,
      headers: { "x-agentplane-identity": await identity(), "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );

// The 500-operation description (its operations counted, not assumed).
const description = generateLargeDescription({ resources: RESOURCES, serverUrl: `http://127.0.0.1:${port}` });
const OPERATIONS = Object.values(description.paths as Record<string, Record<string, unknown>>).reduce(
  (n, item) => n + Object.keys(item).filter((k) => k !== "parameters").length,
  0,
);
const createStart = performance.now();
const res = await call("POST", "/v1/projects/prj_bench/mcp-servers/http", {
  name: "bench",
  specUrl: `http://127.0.0.1:${port}/openapi.json`,
});
const createMs = performance.now() - createStart;
const connector = (await res.json()) as { id: string; toolCount: number };
if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(connector)}`);
// Calls are measured in steady state: the garbage of the discovery above is collected first.
await new Promise((r) => setTimeout(r, 2000));

// The same calls on a replica that asks the real governance-svc (policy bound to the project).
const governance = await startGovernance({ database, bus, keys, authorizer });
await governProject(governance, principal, "prj_bench", "unused-token");
const governed = await createConnectionsService({
  database,
  bus,
  keys,
  logger: silentLogger(),
  authorizer,
  signer: { sign: async () => "unused" },
  governance: governance.client,
  config: { connectors: { allowedHosts: ["127.0.0.1"], scheduler: false } },
});
const callGoverned = async (name: string, expected: number) => {
  const r = await governed.fetch(
    new Request(`http://connections.bench/v1/mcp-servers/${connector.id}/tools/call`, {
      method: "POST",
      headers: { "x-agentplane-identity": await identity(), "content-type": "application/json" },
      body: JSON.stringify({ name, arguments: { accountId: "acc-1" } }),
    }),
  );
  if (r.status !== expected) throw new Error(`governed call of ${name}: ${r.status} ${await r.text()}`);
  await r.json();
};
const client = await inProcessMcpClient("http://connections.bench/projects/prj_bench/mcp", identity, (r) =>
  service.fetch(r),
);
const agent = new Agent({ keepAliveTimeout: 30_000 });

// What each call commits before it answers (the audit record), for the floor line.
const auditEvent = {
  action: "connector.tool_called",
  orgId: "org_bench",
  projectId: "prj_bench",
  targetType: "connector",
  targetId: connector.id,
  outcome: "success" as const,
  details: { tool: "getAccount", decision: "allow", argumentNames: ["accountId"], durationMs: 1, status: 200 },
};
const measured = await inTurn(ROUNDS, WARMUP, {
  // Baseline: the same GET straight to the local API.
  direct: async () => {
    const r = await request(`http://127.0.0.1:${port}/accounts/acc-1`, { dispatcher: agent });
    await r.body.json();
  },
  rest: async () => {
    const r = await call("POST", `/v1/mcp-servers/${connector.id}/tools/call`, {
      name: "getAccount",
      arguments: { accountId: "acc-1" },
    });
    if (r.status !== 200) throw new Error(`call failed: ${r.status}`);
    await r.json();
  },
  viaMcp: () => client.callTool({ name: "bench__getAccount", arguments: { accountId: "acc-1" } }),
  governedAllow: () => callGoverned("getAccount", 200),
  auditCommit: () => enqueueAuditRecord(service.context, service.context.db, domainAuditRecord(principal, auditEvent)),
});
const { direct, rest, viaMcp, governedAllow, auditCommit } = measured;
// Apart: governance writes each deny's audit record behind its answer, which would weigh on the
// series measured next in turn.
const governedDeny = await timed(ROUNDS, () => callGoverned("deleteAccount", 403));
const listRounds = Math.max(20, Math.floor(ROUNDS / 10));
const mcpList = await timed(listRounds, () => client.listTools());
const restList = await timed(listRounds, async () =>
  (await call("GET", `/v1/mcp-servers/${connector.id}/tools`)).json(),
);
const restListBytes = await timed(listRounds, async () =>
  (await call("GET", `/v1/mcp-servers/${connector.id}/tools`)).arrayBuffer(),
);

// Discovery of the 500-operation description, in process (no HTTP): load + build, after the calls.
const discovery = await timed(3, async () =>
  buildToolsFromDocument((await loadOpenApiDescription(description)).document),
);

const p = (xs: number[]) => ({ p50: pct(xs, 0.5), p99: pct(xs, 0.99) });
const base = p(direct);
console.log(
  `connector tools (${connector.toolCount} tools from ${OPERATIONS} operations; ${ROUNDS} calls each, one at a time, the series in turn after ${WARMUP} warm-up rounds)`,
);
console.log(`  direct GET to the local API      p50 ${ms(base.p50)}  p99 ${ms(base.p99)}   (baseline)`);
for (const [label, xs] of [
  ["REST tools/call (in process)", rest],
  ["MCP tools/call (SDK client)  ", viaMcp],
  ["REST, governed, allowed      ", governedAllow],
] as const) {
  const r = p(xs);
  console.log(
    `  ${label}     p50 ${ms(r.p50)}  p99 ${ms(r.p99)}   added p50 ${ms(r.p50 - base.p50)}  ×${(r.p50 / base.p50).toFixed(1)}`,
  );
}
const ac = p(auditCommit);
console.log(
  `  audit INSERT committed alone (each call waits for one) p50 ${ms(ac.p50)}  p99 ${ms(ac.p99)}   (${((ac.p50 / (p(rest).p50 - base.p50)) * 100).toFixed(0)}% of REST's added p50)`,
);
const gd = p(governedDeny);
console.log(`  REST, governed, denied (403, full decision each time) p50 ${ms(gd.p50)}  p99 ${ms(gd.p99)}`);
const ml = p(mcpList);
const rl = p(restList);
console.log(`  tools/list, MCP (${connector.toolCount} tools + platform) p50 ${ms(ml.p50)}  p99 ${ms(ml.p99)}`);
console.log(`  GET …/tools, REST (+ JSON.parse)  p50 ${ms(rl.p50)}  p99 ${ms(rl.p99)}`);
const rb = p(restListBytes);
console.log(`  GET …/tools, REST (body bytes)   p50 ${ms(rb.p50)}  p99 ${ms(rb.p99)}`);
console.log(`  discovery of ${OPERATIONS} operations, in process  median ${ms(pct(discovery, 0.5))}`);
console.log(`  create HTTP connector from its URL (fetch + discovery + store)  ${ms(createMs)}`);

await client.close();
await governed.close();
await governance.close();
await service.close();
await agent.close();
api.close();
await database.close();
await created?.drop();
