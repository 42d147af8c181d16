// Bench helper: the all-in-one platform as `npm start` runs it (PGlite on disk, governance with
// sandbox-svc's egress proxy), with an organization, a project, an admin API token and policies
// bound to the project that cover admission and exec, so every create, start and exec is decided.
// Prints one JSON line: the gateway URL, the token and the project. Then, for each line `stages` on
// stdin, one JSON line: the stage marks of sandbox starts and execs since the last request,
// their times in ms since the epoch.
import { join } from "node:path";
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { assemblePlatform } from "../../apps/platform/src/assemble.ts";
import { keepStages, takeStages } from "../../apps/sandbox-svc/src/stages.ts";
import { benchPlatformEnv } from "./platform-env.ts";

keepStages();
const { owner, dataDir, env } = benchPlatformEnv("sandbox");
const database = await openDatabase(`pglite://${join(dataDir, "pgdata")}`);
const platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
const url = platform.url.replace("0.0.0.0", "127.0.0.1");

let token = owner;
async function call<T>(method: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}
const org = await call<{ id: string }>("POST", "/v1/orgs", { name: "Bench" });
const project = await call<{ id: string }>("POST", `/v1/orgs/${org.id}/projects`, { name: "sandboxes" });
token = (await call<{ token: string }>("POST", `/v1/orgs/${org.id}/api-tokens`, { name: "admin", role: "admin" }))
  .token;
const POLICIES = [
  `@id("sandboxes-allowed")
permit(principal, action in [Action::"sandbox:create", Action::"sandbox:start", Action::"sandbox:update"], resource);
@id("no-cloud-keys-in-env")
forbid(principal, action == Action::"sandbox:create", resource) when { context.envNames.contains("AWS_SECRET_ACCESS_KEY") };`,
  `@id("agents-run-tools")
permit(principal, action == Action::"sandbox:exec", resource) when { ["true", "git", "npm"].contains(context.program) };`,
];
for (const [i, cedar] of POLICIES.entries()) {
  const policy = await call<{ id: string }>("POST", `/v1/projects/${project.id}/policies`, { name: `p${i}`, cedar });
  await call("POST", `/v1/projects/${project.id}/policy-bindings`, { policyId: policy.id });
}
process.stdout.write(`${JSON.stringify({ url, token, projectId: project.id, pid: process.pid })}\n`);
let input = "";
process.stdin.on("data", (chunk: Buffer) => {
  input += chunk.toString("utf8");
  for (let i = input.indexOf("\n"); i >= 0; i = input.indexOf("\n")) {
    const line = input.slice(0, i);
    input = input.slice(i + 1);
    if (line !== "stages") continue;
    const marks = takeStages().map((m) => ({ stage: m.stage, at: performance.timeOrigin + m.at }));
    process.stdout.write(`${JSON.stringify(marks)}\n`);
  }
});
process.on("SIGTERM", () => {
  void platform.close().finally(() => process.exit(0));
});
