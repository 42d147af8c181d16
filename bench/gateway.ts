// Authenticated GET /v1/auth/me through the gateway vs the tenancy app called directly, in both
// modes, measured in one run. Run: npm run bench -- gateway  (or node bench/gateway.ts on Node 24)
import { randomBytes } from "node:crypto";
import { internalResolveApiTokenRoute, ResolvedPrincipal } from "@agentplane/contracts";
import {
  generateInternalKeys,
  httpFetch,
  ServiceClient,
  servicePrincipal,
  signIdentity,
} from "@agentplane/service-kit";
import { createTestDatabase, TEST_REDIS_URL } from "@agentplane/testkit";
import {
  firstLine,
  fmt,
  freePort,
  interleavedLatency,
  type LoadResult,
  load,
  processCpuMs,
  startNode,
  waitForHealth,
} from "./lib.ts";

// GATEWAY_BENCH_MODES=distributed (or all-in-one) runs one mode; GATEWAY_BENCH_PROFILE=<dir> writes
// V8 CPU profiles of the distributed gateway and tenancy processes there (node --cpu-prof).
const modes = (process.env.GATEWAY_BENCH_MODES ?? "all-in-one,distributed").split(",");
const profileDir = process.env.GATEWAY_BENCH_PROFILE;
const profiled = (name: string): Record<string, string> =>
  profileDir
    ? {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${profileDir} --cpu-prof-name=${name}.cpuprofile`,
      }
    : {};

const token = `bench_${randomBytes(24).toString("hex")}`;
const PATH = "/v1/auth/me";

type Measured = LoadResult & { cpu?: { gateway: number; tenancy: number } };

interface Pair {
  direct: Measured;
  gateway: Measured;
}

/** Throughput at 10 connections (both saturate the 2 cores) and latency at 1 connection (no queueing). */
type Target = [url: string, headers: Record<string, string>];

/** Processes whose CPU time per request is reported (the distributed mode). */
interface Processes {
  gateway: number | undefined;
  tenancy: number | undefined;
}

async function measure(direct: Target, gateway: Target, pids?: Processes): Promise<[Pair, Pair]> {
  const busy = { direct: await load(...direct), gateway: await load(...gateway) };
  // One request at a time: 300 warm-up and 3,000 measured requests per target, direct and through
  // the gateway alternating in blocks of 100; the CPU each block used is counted for its target.
  const used = [
    { gateway: 0, tenancy: 0 },
    { gateway: 0, tenancy: 0 },
  ];
  const requests = 3000;
  const [direct1, gateway1] = (await interleavedLatency([direct, gateway], {
    requests,
    around: async (i, run) => {
      const before = { gateway: processCpuMs(pids?.gateway) ?? 0, tenancy: processCpuMs(pids?.tenancy) ?? 0 };
      await run();
      used[i]!.gateway += (processCpuMs(pids?.gateway) ?? 0) - before.gateway;
      used[i]!.tenancy += (processCpuMs(pids?.tenancy) ?? 0) - before.tenancy;
    },
  })) as [LoadResult, LoadResult];
  const cpu = (i: number) =>
    pids ? { cpu: { gateway: used[i]!.gateway / requests, tenancy: used[i]!.tenancy / requests } } : {};
  const idle = { direct: { ...direct1, ...cpu(0) }, gateway: { ...gateway1, ...cpu(1) } };
  return [busy, idle];
}

function report(mode: string, [busy, idle]: [Pair, Pair]): string {
  const cpu = (r: Measured) =>
    r.cpu ? `gateway ${fmt(r.cpu.gateway * 1000, 0)} µs + tenancy ${fmt(r.cpu.tenancy * 1000, 0)} µs` : "";
  const lines = [
    section(`${mode}, 10 connections`, busy.direct, busy.gateway),
    section(`${mode}, 1 request at a time`, idle.direct, idle.gateway),
  ];
  if (idle.gateway.cpu) {
    lines.push(`  CPU per request, 1 at a time: direct ${cpu(idle.direct)};  through the gateway ${cpu(idle.gateway)}`);
  }
  return lines.join("\n");
}

function section(mode: string, direct: LoadResult, gateway: LoadResult): string {
  return [
    `${mode}:`,
    `  direct   ${fmt(direct.rps, 0)} req/s  p50 ${fmt(direct.p50)} ms  p99 ${fmt(direct.p99)} ms  (non-2xx ${direct.non2xx}, errors ${direct.errors})`,
    `  gateway  ${fmt(gateway.rps, 0)} req/s  p50 ${fmt(gateway.p50)} ms  p99 ${fmt(gateway.p99)} ms  (non-2xx ${gateway.non2xx}, errors ${gateway.errors})`,
    `  ratio gateway/direct ${fmt(gateway.rps / direct.rps)}x;  added p50 ${fmt(gateway.p50 - direct.p50)} ms, added p99 ${fmt(gateway.p99 - direct.p99)} ms`,
  ].join("\n");
}

async function allInOne(): Promise<string> {
  const child = startNode("bench/servers/all-in-one.ts", [], { AGENTPLANE_BOOTSTRAP_TOKEN: token });
  try {
    const info = JSON.parse(await firstLine(child)) as { gateway: string; tenancy: string; identity: string };
    const pairs = await measure(
      [`${info.tenancy}${PATH}`, { "x-agentplane-identity": info.identity }],
      [`${info.gateway}${PATH}`, { authorization: `Bearer ${token}` }],
    );
    return report("all-in-one (one process, PGlite, in-process dispatch)", pairs);
  } finally {
    child.kill("SIGTERM");
  }
}

async function distributed(): Promise<string> {
  const database = await createTestDatabase("bench");
  const keys = await generateInternalKeys();
  const [tenancyPort, gatewayPort] = [await freePort(), await freePort()];
  const shared = {
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
    AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
    TENANCY_URL: `http://127.0.0.1:${tenancyPort}`,
    RATE_LIMIT_PER_MINUTE: "100000000",
  };
  const tenancy = startNode("apps/platform/src/main.ts", ["--target=tenancy"], {
    ...shared,
    PORT: String(tenancyPort),
    AGENTPLANE_BOOTSTRAP_TOKEN: token,
    ...profiled("tenancy"),
  });
  const gatewayProc = startNode("apps/platform/src/main.ts", ["--target=gateway"], {
    ...shared,
    PORT: String(gatewayPort),
    ...profiled("gateway"),
  });
  try {
    await waitForHealth(shared.TENANCY_URL);
    await waitForHealth(`http://127.0.0.1:${gatewayPort}`);
    const client = new ServiceClient("tenancy", httpFetch(shared.TENANCY_URL), keys);
    const { principal } = ResolvedPrincipal.parse(
      await client.request("POST", internalResolveApiTokenRoute.path, {
        principal: servicePrincipal("bench"),
        body: { token },
      }),
    );
    const identity = await signIdentity(keys, principal, { audience: "tenancy", ttlSeconds: 3600 });
    const pairs = await measure(
      [`${shared.TENANCY_URL}${PATH}`, { "x-agentplane-identity": identity }],
      [`http://127.0.0.1:${gatewayPort}${PATH}`, { authorization: `Bearer ${token}` }],
      { gateway: gatewayProc.pid, tenancy: tenancy.pid },
    );
    return report("distributed (gateway and tenancy processes, Postgres, Redis, HTTP keep-alive)", pairs);
  } finally {
    tenancy.kill("SIGTERM");
    gatewayProc.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, profileDir ? 3000 : 500));
    await database.drop();
  }
}

console.log(`gateway benchmark: ${PATH}, autocannon, 8 s after 2 s warm-up per measurement\n`);
if (modes.includes("all-in-one")) console.log(`${await allInOne()}\n`);
if (modes.includes("distributed")) console.log(await distributed());
process.exit(0);
