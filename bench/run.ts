// `npm run bench` runs every benchmark in turn; `npm run bench -- <name>` runs one. Each benchmark
// is its own script (its own process), so one's load does not skew another's figures.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const BENCHES: Record<string, string> = {
  gateway: "gateway.ts",
  "service-client": "service-client.ts",
  audit: "audit-ingest.ts",
  sandbox: "sandbox.ts",
  "sandbox-kubernetes": "sandbox-kubernetes.ts",
  "sandbox-policy": "sandbox-policy.ts",
  governance: "governance.ts",
  runtime: "runtime-webhooks.ts",
  "runtime-core": "runtime-core.ts",
  "runtime-memory": "runtime-memory.ts",
  "runtime-team-chat": "runtime-team-chat.ts",
  inference: "inference.ts",
  "inference-portkey": "inference-portkey.ts",
  "connections-tools": "connections-tools.ts",
  "connections-clusters": "connections-clusters.ts",
  cli: "cli.ts",
  telemetry: "telemetry.ts",
  console: "console.ts",
  "platform-start": "platform-start.ts",
};

const wanted = process.argv.slice(2);
const names = wanted.length ? wanted : Object.keys(BENCHES);
let failed = false;
for (const name of names) {
  const file = BENCHES[name];
  if (!file) {
    console.error(`unknown benchmark ${name}; one of: ${Object.keys(BENCHES).join(", ")}`);
    process.exit(2);
  }
  const path = fileURLToPath(new URL(file, import.meta.url));
  if (!existsSync(path)) {
    console.log(`\n=== ${name}: ${file} not present, skipped ===`);
    continue;
  }
  console.log(`\n=== ${name} (${file}) ===`);
  const res = spawnSync(process.execPath, [path], { stdio: "inherit" });
  if (res.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
