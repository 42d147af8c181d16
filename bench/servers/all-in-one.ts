// Bench helper: the all-in-one platform plus the tenancy app served directly on its own port, so
// the benchmark compares the two from outside this process. Prints one JSON line with the URLs and
// the internal identity header a direct call needs (what the gateway would have added).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { internalResolveApiTokenRoute, ResolvedPrincipal } from "@agentplane/contracts";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import {
  inProcessFetch,
  ServiceClient,
  serveFetch,
  servicePrincipal,
  signIdentity,
  silentLogger,
} from "@agentplane/service-kit";
import { assemblePlatform } from "../../apps/platform/src/assemble.ts";
import { AllInOneEnvSchema } from "../../apps/platform/src/config.ts";

const token = process.env.AGENTPLANE_BOOTSTRAP_TOKEN!;
const dataDir = mkdtempSync(join(tmpdir(), "agentplane-bench-"));
const env = AllInOneEnvSchema.parse({
  PORT: "0",
  HOST: "127.0.0.1",
  AGENTPLANE_DATA_DIR: dataDir,
  AGENTPLANE_BOOTSTRAP_TOKEN: token,
  RATE_LIMIT_PER_MINUTE: "100000000",
  AGENT_RUNTIME: "off",
  LOG_LEVEL: "silent",
  // bench/telemetry.ts starts one platform exporting spans and one that does not.
  OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
});
const database = await openDatabase(`pglite://${join(dataDir, "pgdata")}`);
const platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
const tenancy = platform.services.tenancy!;
const direct = await serveFetch((req) => tenancy.fetch(req), { port: 0, hostname: "127.0.0.1" });
const client = new ServiceClient("tenancy", inProcessFetch(tenancy), platform.keys);
const resolved = ResolvedPrincipal.parse(
  await client.request("POST", internalResolveApiTokenRoute.path, {
    principal: servicePrincipal("bench"),
    body: { token },
  }),
);
const identity = await signIdentity(platform.keys, resolved.principal, { audience: "tenancy", ttlSeconds: 3600 });
process.stdout.write(`${JSON.stringify({ gateway: platform.url, tenancy: direct.url, identity })}\n`);
