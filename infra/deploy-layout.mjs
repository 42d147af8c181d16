// Lays out a `pnpm deploy --prod --config.node-linker=hoisted` output like the repository:
//   node infra/deploy-layout.mjs <deploy dir> <target dir> <repository dir>
// The deployed package goes to <target>/<its path in the repository>, node_modules to
// <target>/node_modules, and each workspace package from node_modules/@agentplane to its own path
// (apps/… or packages/…) with a symlink left in its place. Node only strips TypeScript types
// outside node_modules, and the launcher imports the services by their relative paths.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const [deployDir, targetDir, repoDir] = process.argv.slice(2);
if (!deployDir || !targetDir || !repoDir) {
  console.error("usage: node infra/deploy-layout.mjs <deploy dir> <target dir> <repository dir>");
  process.exit(2);
}

/** Where a workspace package lives in the repository, by its name (`@agentplane/db` → packages/db). */
function repoPath(name) {
  for (const parent of ["apps", "packages"]) {
    for (const dir of readdirSync(join(repoDir, parent))) {
      const manifest = join(repoDir, parent, dir, "package.json");
      if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === name) return join(parent, dir);
    }
  }
  throw new Error(`${name} is not a workspace package of ${repoDir}`);
}

const own = JSON.parse(readFileSync(join(deployDir, "package.json"), "utf8")).name;
mkdirSync(targetDir, { recursive: true });
renameSync(join(deployDir, "node_modules"), join(targetDir, "node_modules"));
const ownPath = join(targetDir, repoPath(own));
mkdirSync(dirname(ownPath), { recursive: true });
renameSync(deployDir, ownPath);

const scope = join(targetDir, "node_modules", "@agentplane");
for (const dir of existsSync(scope) ? readdirSync(scope) : []) {
  const from = join(scope, dir);
  const to = join(targetDir, repoPath(`@agentplane/${dir}`));
  mkdirSync(dirname(to), { recursive: true });
  renameSync(from, to);
  symlinkSync(relative(scope, to), from);
  console.log(`@agentplane/${dir} -> ${relative(targetDir, to)}`);
}
