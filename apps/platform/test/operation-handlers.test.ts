import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { ALL_INTERNAL_ROUTES, ALL_ROUTES, llmPassThroughRoutes, type ServiceName } from "@agentplane/contracts";
import * as runtimeContracts from "@agentplane/contracts/runtime";
import { describe, expect, it } from "vitest";

// Path → handler is mechanical: the contract's operationId names its handler `register<OperationId>`,
// exported by one file under the owning service's `src/routes/`, which its `routes/index.ts` lists.
// A few operations are served as one family by one handler (a pass-through or a proxy that takes
// every method, a WebSocket upgrade); each family is named here with the function that serves it.

const repo = resolve(import.meta.dirname, "../../..");

const APP_OF: Record<ServiceName, string> = {
  tenancy: "tenancy-svc",
  sandbox: "sandbox-svc",
  audit: "audit-svc",
  governance: "governance-svc",
  connections: "connections-svc",
  inference: "inference-proxy",
};

/** The services whose handlers follow the rule (all of them once the last one is converted). */
const CHECKED: readonly ServiceName[] = ["sandbox", "tenancy", "governance", "audit", "inference", "connections"];

const operationIds = (prefix: string) => ALL_ROUTES.map((r) => r.operationId).filter((id) => id.startsWith(prefix));

const FAMILIES: readonly { handler: string; operationIds: readonly string[] }[] = [
  { handler: "llmPassThroughFetch", operationIds: llmPassThroughRoutes.map((r) => r.operationId) },
  { handler: "registerAwsProxy", operationIds: operationIds("awsProxy") },
  { handler: "registerClusterProxy", operationIds: operationIds("clusterProxy") },
  { handler: "createExecUpgradeHandler", operationIds: ["execSandboxStream", "k8sExecPod", "k8sAttachPod"] },
  { handler: "createTunnelUpgradeHandler", operationIds: ["openClusterTunnel"] },
];

interface Operation {
  operationId: string;
  service: ServiceName;
}

/** Every operation with a contract: the `/v1` document and the internal endpoints. */
function allOperations(): Operation[] {
  const ops: Operation[] = ALL_ROUTES.map((r) => ({ operationId: r.operationId, service: r["x-service"] }));
  for (const r of ALL_INTERNAL_ROUTES) ops.push({ operationId: r.operationId, service: r["x-service"] });
  return ops;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

const FAMILY_HANDLERS = FAMILIES.map((f) => f.handler).join("|");

/** `register…` and family handler exports of each file under a service's `src/routes/`. */
function handlerExports(app: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of filesUnder(join(repo, "apps", app, "src", "routes"))) {
    const text = readFileSync(file, "utf8");
    const names = [...text.matchAll(new RegExp(`export function (register\\w+|${FAMILY_HANDLERS})\\b`, "g"))].map(
      (m) => m[1] ?? "",
    );
    if (names.length > 0) out.set(relative(repo, file), names);
  }
  return out;
}

const handlerName = (operationId: string) =>
  FAMILIES.find((f) => f.operationIds.includes(operationId))?.handler ??
  `register${operationId[0]?.toUpperCase()}${operationId.slice(1)}`;

/** The agent runtime's operations: every contract `@agentplane/contracts/runtime` exports. */
const runtimeOperationIds = Object.values(runtimeContracts).flatMap((value) =>
  typeof value === "object" && value !== null && "operationId" in value && "path" in value
    ? [String(value.operationId)]
    : [],
);

/** Each app whose handlers follow the rule, with the operationIds it serves. */
const TARGETS: readonly { app: string; operationIds: readonly string[] }[] = [
  ...CHECKED.map((service) => ({
    app: APP_OF[service],
    operationIds: allOperations()
      .filter((o) => o.service === service)
      .map((o) => o.operationId),
  })),
  { app: "agent-runtime", operationIds: runtimeOperationIds },
];

describe.each(TARGETS)("$app: every operationId maps to exactly one handler file", ({ app, operationIds }) => {
  const handlers = handlerExports(app);
  const indexFile = join(repo, "apps", app, "src", "routes", "index.ts");

  it("names one handler file per operation", () => {
    expect(operationIds.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const operationId of operationIds) {
      const name = handlerName(operationId);
      const files = [...handlers].filter(([, names]) => names.includes(name)).map(([file]) => file);
      if (files.length !== 1) problems.push(`${operationId}: ${name} in ${files.length} files ${files.join(", ")}`);
    }
    expect(problems).toEqual([]);
  });

  it("holds one handler per file, each listed in routes/index.ts", () => {
    const problems: string[] = [];
    const index = existsSync(indexFile) ? readFileSync(indexFile, "utf8") : "";
    if (!index) problems.push(`${relative(repo, indexFile)} is missing`);
    for (const [file, names] of handlers) {
      if (file.endsWith("/routes/index.ts")) continue;
      if (names.length !== 1) problems.push(`${file} exports ${names.join(", ")}`);
      for (const name of names) {
        if (name.startsWith("register") && !new RegExp(`\\b${name}\\b`).test(index)) {
          problems.push(`${name} (${file}) is not listed in routes/index.ts`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
