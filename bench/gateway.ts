// Authenticated GET /v1/auth/me through the gateway vs the tenancy app called directly, in both
// modes, measured in one run. Run: npm run bench -- gateway  (or node bench/gateway.ts on Node 24)
import { randomBytes } from "node:crypto";
import { ResolvedPrincipal, TENANCY_INTERNAL } from "@agentplane/contracts";
import {
  generateInternalKeys,
  httpFetch,
  ServiceClient,
  servicePrincipal,
  signIdentity,
} from "@agentplane/service-kit";
import { createTestDatabase, TEST_REDIS_URL } from "@agentplane/testkit";
import { firstLine, fmt, freePort, type LoadResult, load, startNode, waitForHealth } from "./lib.ts";

const token = `bench_${randomBytes(24).toString("hex")}`;
const PATH = "/v1/auth/me";

function report(mode: string, direct: LoadResult, gateway: LoadResult): string {
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
    const direct = await load(`${info.tenancy}${PATH}`, { "x-agentplane-identity": info.identity });
    const gateway = await load(`${info.gateway}${PATH}`, { authorization: `Bearer ${token}` });
    return report("all-in-one (one process, PGlite, in-process dispatch)", direct, gateway);
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
  });
  const gatewayProc = startNode("apps/platform/src/main.ts", ["--target=gateway"], {
    ...shared,
    PORT: String(gatewayPort),
  });
  try {
    await waitForHealth(shared.TENANCY_URL);
    await waitForHealth(`http://127.0.0.1:${gatewayPort}`);
    const client = new ServiceClient("tenancy", httpFetch(shared.TENANCY_URL), keys);
    const { principal } = ResolvedPrincipal.parse(
      await client.request("POST", TENANCY_INTERNAL.resolveApiToken, {
        principal: servicePrincipal("bench"),
        body: { token },
      }),
    );
    const identity = await signIdentity(keys, principal, { audience: "tenancy", ttlSeconds: 3600 });
    const direct = await load(`${shared.TENANCY_URL}${PATH}`, { "x-agentplane-identity": identity });
    const gateway = await load(`http://127.0.0.1:${gatewayPort}${PATH}`, { authorization: `Bearer ${token}` });
    return report("distributed (gateway and tenancy processes, Postgres, Redis, HTTP keep-alive)", direct, gateway);
  } finally {
    tenancy.kill("SIGTERM");
    gatewayProc.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    await database.drop();
  }
}

console.log(`gateway benchmark: ${PATH}, autocannon 10 connections, 8 s after 2 s warm-up\n`);
console.log(await allInOne());
console.log();
console.log(await distributed());
process.exit(0);
