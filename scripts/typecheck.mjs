// `npm run typecheck`: every TypeScript source of the repository, each file checked once. The root
// tsconfig.json holds everything that runs on Node (apps, packages, their tests and scripts, bench,
// tests): one program, so a shared package is checked once rather than once per app that imports
// it. The two browser bundles have their own compiler options (DOM, JSX) and are checked after it.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const PROJECTS = ["tsconfig.json", "apps/console/tsconfig.json", "apps/agent-runtime/web/tsconfig.json"];

let failed = false;
for (const project of PROJECTS) {
  const started = performance.now();
  const res = spawnSync("pnpm", ["exec", "tsc", "--noEmit", "-p", project], { stdio: "inherit", cwd: root });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const ok = res.status === 0;
  failed ||= !ok;
  process.stderr.write(`typecheck ${project}: ${ok ? "ok" : "FAILED"} in ${seconds} s\n`);
}
process.exit(failed ? 1 : 0);
