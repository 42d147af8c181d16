// CLI cold start: `agentplane --version` and `agentplane orgs list --json` against a local platform,
// each next to `node -e 0` in the same run (interleaved, so the machine's load weighs on all alike).
// Aims: at most 150 ms added for --version, 250 ms for a list.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createAgentplaneClient } from "@agentplane/sdk";
import { startTestPlatform } from "../packages/sdk/test/platform.ts";

const MAIN = fileURLToPath(new URL("../apps/cli/bin/agentplane.mjs", import.meta.url));
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);

function timed(args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${stderr}`));
      else resolve(performance.now() - started);
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
  const samples = cases.map(() => [] as number[]);
  for (const [, args] of cases) await timed(args, env); // warm the file cache
  for (let i = 0; i < RUNS; i++) {
    for (let c = 0; c < cases.length; c++) samples[c]!.push(await timed(cases[c]![1], env));
  }
  const base = quantile(samples[0]!, 0.5);
  console.log(`${RUNS} runs each, interleaved; wall time in ms`);
  console.log("case                           p50      p90    added (p50)");
  cases.forEach(([name], c) => {
    const p50 = quantile(samples[c]!, 0.5);
    const added = c === 0 ? "" : `${(p50 - base).toFixed(0)}`;
    console.log(
      `${name.padEnd(28)} ${p50.toFixed(0).padStart(6)} ${quantile(samples[c]!, 0.9).toFixed(0).padStart(8)}    ${added}`,
    );
  });
  console.log("aims: --version adds <= 150 ms, orgs list --json adds <= 250 ms");
} finally {
  await platform.close();
}
