// Sandboxes on the local bubblewrap driver, each figure against a baseline measured in the same run.
// Run: node scripts/bootstrap.mjs node bench/sandbox.ts
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "@agentplane/db";
import { MemoryBus, outboxMigrations } from "@agentplane/events";
import type { Caller } from "@agentplane/service-kit";
import { silentLogger } from "@agentplane/service-kit";
import { Agent, request } from "undici";
import { SANDBOX_SCHEMA } from "../apps/sandbox-svc/src/app.ts";
import { migrations } from "../apps/sandbox-svc/src/db/migrations/index.ts";
import { imageMountArgs } from "../apps/sandbox-svc/src/driver/local/images.ts";
import { LocalDriver } from "../apps/sandbox-svc/src/driver/local/local-driver.ts";
import { serveStream, WebSocketServer } from "../apps/sandbox-svc/src/routes/exec-stream/channels.ts";
import { createSandbox } from "../apps/sandbox-svc/src/services/create.ts";
import { execInSandbox } from "../apps/sandbox-svc/src/services/exec.ts";
import { getSandboxRow } from "../apps/sandbox-svc/src/services/sandboxes.ts";
import { migrateToLatest } from "../packages/db/src/migrate.ts";
import { firstLine, REPO_ROOT } from "./lib.ts";
import { sandboxDeps } from "./sandbox-deps.ts";
import { benchDataDir, removeBenchDataDir } from "./servers/platform-env.ts";

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
const ms = (x: number) => `${x.toFixed(1)} ms`;

// 1. Create+start → first exec answered, through the public API of the all-in-one platform in a
// process of its own (gateway, authorization, governance admission and exec decisions under bound
// policies, the egress proxy, audit records in the transaction of each change): HTTP
// `POST /v1/projects/{p}/sandboxes` with `start: true`, then `POST /v1/shell/exec` of `true`. The
// floor, in the same rounds: a bare bwrap sandbox of the same namespaces and mounts running `true`,
// spawned from this process before it holds PGlite (so no fork of a large process is in it).
// SANDBOX_BENCH_PROFILE=<dir> writes a V8 CPU profile of the platform process there. The platform
// marks the stages of each start and exec: their medians are printed after.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const profileDir = process.env.SANDBOX_BENCH_PROFILE;
const platform = spawn(
  process.execPath,
  [...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), "bench/servers/sandbox-platform.ts"],
  {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["pipe", "pipe", "inherit"],
  },
);
const api = JSON.parse(await firstLine(platform)) as { url: string; token: string; projectId: string };
// The platform's further stdout lines, each the answer to a `stages` request.
const answers: string[] = [];
const waiting: ((line: string) => void)[] = [];
let pendingText = "";
platform.stdout?.on("data", (chunk: Buffer) => {
  pendingText += chunk.toString("utf8");
  for (let i = pendingText.indexOf("\n"); i >= 0; i = pendingText.indexOf("\n")) {
    const line = pendingText.slice(0, i);
    pendingText = pendingText.slice(i + 1);
    if (line.startsWith("[")) (waiting.shift() ?? ((l: string) => answers.push(l)))(line);
  }
});
async function platformStages(): Promise<{ stage: string; at: number }[]> {
  const line =
    answers.shift() ??
    (await new Promise<string>((resolve) => {
      waiting.push(resolve);
      platform.stdin?.write("stages\n");
    }));
  return JSON.parse(line) as { stage: string; at: number }[];
}
// Per stage (in the order of the first round), its offset from the request and its step from the mark before.
const stageRounds: Map<string, { offset: number; step: number }>[] = [];
const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
async function call<T>(method: "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  const res = await request(`${api.url}${path}`, {
    method,
    dispatcher: agent,
    headers: { authorization: `Bearer ${api.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
const floorWorkspace = mkdtempSync(join(tmpdir(), "bench-bwrap-"));
// The driver's namespaces, user and mounts (default image), without its cgroups and ready signal.
const floorArgs = [
  ...["--unshare-all", "--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL"],
  ...["--die-with-parent", "--new-session", "--hostname", "floor", ...imageMountArgs("default", {})],
  ...["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/run"],
  ...["--bind", floorWorkspace, "/workspace", "--chdir", "/workspace", "--", "true"],
];
const bareBwrap = () =>
  new Promise<void>((resolve, reject) =>
    spawn("bwrap", floorArgs, { stdio: "ignore" }).once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`bwrap exited with ${code}`)),
    ),
  );
const viaApi: number[] = [];
const floor: number[] = [];
for (let i = 0; i < 3 + ROUNDS; i++) {
  let t = performance.now();
  await bareBwrap();
  const bare = performance.now() - t;
  await platformStages(); // drop the marks of the previous round's delete
  const sent = performance.timeOrigin + performance.now();
  t = performance.now();
  const box = await call<{ id: string }>("POST", `/v1/projects/${api.projectId}/sandboxes`, {
    name: `first-${i}`,
    start: true,
  });
  const created = performance.timeOrigin + performance.now();
  const answer = await call<{ exitCode: number }>("POST", "/v1/shell/exec", {
    projectId: api.projectId,
    sandboxId: box.id,
    command: ["true"],
  });
  const elapsed = performance.now() - t;
  const answered = performance.timeOrigin + performance.now();
  const marks = [
    { stage: "client: create sent", at: sent },
    ...(await platformStages()),
    { stage: "client: create answered", at: created },
    { stage: "client: exec answered", at: answered },
  ].sort((a, b) => a.at - b.at);
  if (answer.exitCode !== 0) throw new Error(`exec answered ${JSON.stringify(answer)}`);
  await call("DELETE", `/v1/projects/${api.projectId}/sandboxes/${box.id}`);
  if (i < 3) continue; // warm-up: the spawner helper, JIT
  floor.push(bare);
  viaApi.push(elapsed);
  stageRounds.push(
    new Map(
      marks.map((m, j) => [m.stage, { offset: m.at - sent, step: j === 0 ? 0 : m.at - (marks[j - 1]?.at ?? sent) }]),
    ),
  );
}
await agent.close();
platform.kill("SIGTERM");
await new Promise((r) => platform.once("exit", r));
rmSync(floorWorkspace, { recursive: true, force: true });
console.log(
  `create+start→first exec (HTTP API, governed, egress): p50 ${ms(pct(viaApi, 0.5))}  p95 ${ms(pct(viaApi, 0.95))} | bare bwrap p50 ${ms(pct(floor, 0.5))}  p95 ${ms(pct(floor, 0.95))}  ratio p50 ${(pct(viaApi, 0.5) / pct(floor, 0.5)).toFixed(1)}x  (aim p50 < 40 ms)`,
);
const stageNames = [...new Set(stageRounds.flatMap((r) => [...r.keys()]))];
const stageOf = (name: string, key: "offset" | "step") =>
  stageRounds.flatMap((r) => (r.has(name) ? [r.get(name)?.[key] as number] : []));
stageNames.sort((a, b) => pct(stageOf(a, "offset"), 0.5) - pct(stageOf(b, "offset"), 0.5));
console.log("  stages (p50 since the create was sent | p50 step from the mark before it in the round):");
for (const name of stageNames) {
  console.log(
    `    ${name.padEnd(28)} ${ms(pct(stageOf(name, "offset"), 0.5)).padStart(9)} | ${ms(pct(stageOf(name, "step"), 0.5)).padStart(8)}`,
  );
}

const dataDir = benchDataDir("bench-sandbox-");
const database = await openDatabase("pglite://memory");
await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
const logger = silentLogger();
const driver = new LocalDriver({ dataDir, logger });
const bus = new MemoryBus();
const deps = sandboxDeps(database, bus, driver, logger);
const actor: Caller = { principal: { type: "user", id: "usr_bench" }, orgId: "org_bench" };
const P = "prj_bench";
console.log("driver:", JSON.stringify(driver.describe()));

// 2. Exec round trip of `true` vs spawning `true` directly from this process. This process holds
// PGlite, as the all-in-one service does, so a direct spawn pays for forking it; sandbox execs are
// forked by the driver's small spawner helper instead, which is why the ratio can be below 1.
const spawnTrue = () =>
  new Promise<void>((resolve) => spawn("true", { stdio: "ignore" }).once("exit", () => resolve()));
const row = await createSandbox(deps, actor, { projectId: P, name: "rt", labels: {}, start: true });
const live = await getSandboxRow(deps, P, row.id);
const direct: number[] = [];
const viaSandbox: number[] = [];
for (let i = 0; i < 200; i++) {
  let t = performance.now();
  await spawnTrue();
  direct.push(performance.now() - t);
  t = performance.now();
  await execInSandbox(deps, actor, { command: ["true"], timeoutMs: 5000, sandbox: live });
  viaSandbox.push(performance.now() - t);
}
console.log(
  `exec true: p50 ${ms(pct(viaSandbox, 0.5))}  p95 ${ms(pct(viaSandbox, 0.95))}  | direct spawn p50 ${ms(pct(direct, 0.5))}  p95 ${ms(pct(direct, 0.95))}  ratio p50 ${(pct(viaSandbox, 0.5) / pct(direct, 0.5)).toFixed(1)}x  (aim p50 < 15 ms)`,
);

// 3. WebSocket stdout throughput vs reading the same bytes from a local pipe.
const BYTES = 512 * 1024 * 1024;
const command = ["head", "-c", String(BYTES), "/dev/zero"];
const pipeStart = performance.now();
await new Promise<void>((resolve) => {
  const child = spawn(command[0] as string, command.slice(1), { stdio: ["ignore", "pipe", "ignore"] });
  child.stdout.on("data", () => {});
  child.stdout.once("end", () => resolve());
});
const pipeMBs = BYTES / 1e6 / ((performance.now() - pipeStart) / 1000);
const wss = new WebSocketServer({
  noServer: true,
  perMessageDeflate: false,
  handleProtocols: () => "v5.channel.k8s.io",
});
const server = createServer();
server.on("upgrade", (req, socket, head) => {
  void driver
    .exec(row.id, { argv: command })
    .then((proc) => wss.handleUpgrade(req, socket, head, (ws) => void serveStream(ws, proc)));
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const wsStart = performance.now();
let received = 0;
await new Promise<void>((resolve, reject) => {
  const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, ["v5.channel.k8s.io"]);
  ws.binaryType = "arraybuffer";
  ws.onmessage = (e) => {
    const data = new Uint8Array(e.data as ArrayBuffer);
    if (data[0] === 1) received += data.length - 1;
    if (data[0] === 3) resolve();
  };
  ws.onerror = () => reject(new Error("websocket failed"));
});
const wsMBs = received / 1e6 / ((performance.now() - wsStart) / 1000);
server.close();
console.log(
  `WebSocket stdout: ${wsMBs.toFixed(0)} MB/s (${(received / 1e6).toFixed(0)} MB) | local pipe ${pipeMBs.toFixed(0)} MB/s  ratio ${(wsMBs / pipeMBs).toFixed(2)}  (aim >= 100 MB/s)`,
);
await driver.stop(row.id);

// 4. 50 sandboxes running at once.
const t50 = performance.now();
const ids: string[] = [];
for (let i = 0; i < 50; i++) {
  const r = await createSandbox(deps, actor, { projectId: P, name: `many-${i}`, labels: {}, start: true });
  ids.push(r.id);
}
const started50 = performance.now() - t50;
const tExec = performance.now();
const results = await Promise.all(
  ids.map(async (id) =>
    execInSandbox(deps, actor, { command: "echo up", timeoutMs: 10_000, sandbox: await getSandboxRow(deps, P, id) }),
  ),
);
const ok = results.filter((r) => r.stdout === "up\n").length;
console.log(
  `50 sandboxes: all started in ${ms(started50)} (${ms(started50 / 50)} each); ${ok}/50 answered a concurrent exec in ${ms(performance.now() - tExec)}`,
);

await deps.outbox.stop();
await driver.close();
await bus.close();
await database.close();
removeBenchDataDir(dataDir);
