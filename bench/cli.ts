// CLI cold start: `agentplane --version` and `agentplane orgs list --json` against a local platform,
// each next to `node -e 0` in the same run (interleaved, so the machine's load weighs on all alike).
// Aims: at most 150 ms added for --version, 250 ms for a list. Wall time on a shared machine is
// mostly waiting for a core, so the CPU time each process used (user + system, through
// /usr/bin/time where it exists) is printed too: it moves only with the work the CLI does.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createAgentplaneClient } from "@agentplane/sdk";
import { startTestPlatform } from "../packages/sdk/test/platform.ts";

const MAIN = fileURLToPath(new URL("../apps/cli/bin/agentplane.mjs", import.meta.url));
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);

const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

interface Sample {
  wall: number;
  cpu?: number;
}

function timed(args: string[], env: Record<string, string>): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const [command, argv] = TIME
      ? [TIME, ["-f", "cpu-seconds %U %S", process.execPath, ...args]]
      : [process.execPath, args];
    const child = spawn(command, argv, {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const wall = performance.now() - started;
      if (code !== 0) return reject(new Error(`${args.join(" ")} exited ${code}: ${stderr}`));
      const used = /cpu-seconds ([\d.]+) ([\d.]+)/.exec(stderr);
      resolve(used ? { wall, cpu: (Number(used[1]) + Number(used[2])) * 1000 } : { wall });
    });
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

const platform = await startTestPlatform();
try {
  const sdk = createAgentplaneClient({ baseUrl: platform.url, token: platform.ownerToken });
  await sdk.request("createOrganization", { body: { name: "Bench" } });
  const env = {
    AGENTPLANE_URL: platform.url,
    AGENTPLANE_TOKEN: platform.ownerToken,
    AGENTPLANE_CONFIG_DIR: "/nonexistent",
  };
  const cases: [string, string[]][] = [
    ["node -e 0", ["-e", "0"]],
    ["agentplane --version", [MAIN, "--version"]],
    ["agentplane orgs list --json", [MAIN, "orgs", "list", "--json"]],
  ];
  const samples = cases.map(() => [] as Sample[]);
  for (const [, args] of cases) await timed(args, env); // warm the file cache
  for (let i = 0; i < RUNS; i++) {
    for (let c = 0; c < cases.length; c++) samples[c]!.push(await timed(cases[c]![1], env));
  }
  const wall = (c: number) => samples[c]!.map((s) => s.wall);
  const cpu = (c: number) => samples[c]!.flatMap((s) => (s.cpu === undefined ? [] : [s.cpu]));
  const base = quantile(wall(0), 0.5);
  const cpuBase = cpu(0).length ? quantile(cpu(0), 0.5) : undefined;
  console.log(`${RUNS} runs each, interleaved; wall time and CPU time (user + system) in ms`);
  console.log("case                         wall p50  wall p90  added (p50)   cpu p50  added");
  cases.forEach(([name], c) => {
    const p50 = quantile(wall(c), 0.5);
    const added = c === 0 ? "" : `${(p50 - base).toFixed(0)}`;
    const cpu50 = cpuBase === undefined ? undefined : quantile(cpu(c), 0.5);
    const cpuCols =
      cpu50 === undefined
        ? ""
        : `${cpu50.toFixed(0).padStart(9)}  ${c === 0 ? "" : (cpu50 - cpuBase!).toFixed(0).padStart(5)}`;
    console.log(
      `${name.padEnd(28)} ${p50.toFixed(0).padStart(8)} ${quantile(wall(c), 0.9).toFixed(0).padStart(9)} ${added.padStart(12)} ${cpuCols}`,
    );
  });
  console.log("aims: --version adds <= 150 ms, orgs list --json adds <= 250 ms");
} finally {
  await platform.close();
}
