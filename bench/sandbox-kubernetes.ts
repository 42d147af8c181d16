// Create → first exec through the kubernetes driver against the fake API server (the unchanged
// @kubernetes/client-node over HTTP and WebSocket, Pods run by the fake kubelet as local processes),
// next to the local bubblewrap driver in the same run. Scheduling and image pulls are a real
// cluster's, so this is the driver's own overhead: API calls, the informer's watch, pods/exec.
// Run: node scripts/bootstrap.mjs node bench/sandbox-kubernetes.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "@agentplane/db";
import { MemoryBus, outboxMigrations } from "@agentplane/events";
import type { Caller } from "@agentplane/service-kit";
import { silentLogger } from "@agentplane/service-kit";
import { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { SANDBOX_SCHEMA } from "../apps/sandbox-svc/src/app.ts";
import { migrations } from "../apps/sandbox-svc/src/db/migrations/index.ts";
import { kubernetesConfigFrom } from "../apps/sandbox-svc/src/driver/kubernetes/config.ts";
import { createKubernetesDriver } from "../apps/sandbox-svc/src/driver/kubernetes/index.ts";
import { LocalDriver } from "../apps/sandbox-svc/src/driver/local/local-driver.ts";
import type { SandboxDriver } from "../apps/sandbox-svc/src/driver/types.ts";
import { createSandbox } from "../apps/sandbox-svc/src/services/create.ts";
import { execInSandbox } from "../apps/sandbox-svc/src/services/exec.ts";
import { deleteSandbox } from "../apps/sandbox-svc/src/services/stop-delete.ts";
import { migrateToLatest } from "../packages/db/src/migrate.ts";
import { sandboxDeps } from "./sandbox-deps.ts";

const ROUNDS = 20;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
const ms = (x: number) => `${x.toFixed(1)} ms`;

const NS = "agentplane-sandboxes";
const fake = await FakeKubeApiServer.start({ token: "bench", namespaces: [NS] });
process.env.KUBECONFIG = fake.kubeconfigFile(NS);
const dataDir = mkdtempSync(join(tmpdir(), "bench-k8s-"));
const database = await openDatabase("pglite://memory");
await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
const logger = silentLogger();
const bus = new MemoryBus();
const actor: Caller = { principal: { type: "user", id: "usr_bench" }, orgId: "org_bench" };

const drivers: Record<string, SandboxDriver> = {
  local: new LocalDriver({ dataDir, logger }),
  kubernetes: createKubernetesDriver(kubernetesConfigFrom({ SANDBOX_K8S_NAMESPACE: NS }), logger),
};

const results: Record<string, number[]> = Object.fromEntries(Object.keys(drivers).map((name) => [name, []]));
// Interleaved rounds, so load elsewhere on the machine weighs on both drivers alike.
for (let i = 0; i < ROUNDS; i++) {
  for (const [name, driver] of Object.entries(drivers)) {
    const deps = sandboxDeps(database, bus, driver, logger);
    const t0 = performance.now();
    const row = await createSandbox(deps, actor, {
      projectId: `prj_${name}`,
      name: `${name}-${i}`,
      labels: {},
      start: true,
    });
    const exec = await execInSandbox(deps, actor, { command: ["true"], timeoutMs: 5000, sandbox: row });
    const elapsed = performance.now() - t0;
    if (exec.exitCode !== 0) throw new Error(`${name}: exec failed: ${exec.stderr}`);
    results[name]?.push(elapsed);
    await deleteSandbox(deps, actor, { projectId: `prj_${name}`, sandboxId: row.id });
    await deps.outbox.stop();
  }
}

for (const [name, xs] of Object.entries(results)) {
  console.log(`${name.padEnd(10)} create+start→first exec: p50 ${ms(pct(xs, 0.5))}  p95 ${ms(pct(xs, 0.95))}`);
}
const ratio = pct(results.kubernetes as number[], 0.5) / pct(results.local as number[], 0.5);
console.log(`kubernetes/local p50: ${ratio.toFixed(1)}x (${ROUNDS} rounds each, interleaved)`);

for (const driver of Object.values(drivers)) await driver.close();
await fake.close();
await bus.close();
await database.close();
rmSync(dataDir, { recursive: true, force: true });
