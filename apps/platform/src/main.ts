// The launcher: `--target=all` (default) runs the whole control plane in this process on embedded
// storage; any other target runs that service as its own deployable (distributed mode), and a
// comma-separated list (`--target=tenancy,sandbox,audit`) runs each listed one in its own process.
import { enableUserCompileCache } from "@agentplane/service-kit/compile-cache";

// V8's compiled code of the sources (after type stripping) and dependencies is kept on disk between
// starts (Node's compile cache, in the user's cache directory): a restart skips most of the parsing and
// compiling that dominates it. Everything else is imported after this line, dynamically.
enableUserCompileCache();

const TARGETS = {
  gateway: "../../api-gateway/src/main.ts",
  tenancy: "../../tenancy-svc/src/main.ts",
  audit: "../../audit-svc/src/main.ts",
  governance: "../../governance-svc/src/main.ts",
  sandbox: "../../sandbox-svc/src/main.ts",
  egress: "../../sandbox-svc/src/egress-main.ts",
  connections: "../../connections-svc/src/main.ts",
  "cluster-relay": "../../cluster-relay/src/main.ts",
  inference: "../../inference-proxy/src/main.ts",
  runtime: "../../agent-runtime/src/main.ts",
} as const;

const args = process.argv.slice(2);
if (args[0] === "keys") {
  // Shared secrets for the distributed mode, printed as an env file.
  const { generateInternalKeys } = await import("@agentplane/service-kit");
  const keys = await generateInternalKeys();
  // The egress proxy's own pair: it signs with the private half, governance verifies with the
  // public half, for egress decisions only (decision 0062).
  const egress = await generateInternalKeys();
  const { randomBytes } = await import("node:crypto");
  // Single-quoted: the same file works with `set -a; . ./.env.distributed`, `node --env-file`,
  // and compose's env_file (JSON keeps its double quotes; base64 and JWK JSON hold no single quote).
  process.stdout.write(
    `INTERNAL_IDENTITY_PRIVATE_KEY='${JSON.stringify(keys.privateJwk)}'\n` +
      `AGENTPLANE_SECRET_KEY='${randomBytes(32).toString("base64")}'\n` +
      `EGRESS_IDENTITY_PRIVATE_KEY='${JSON.stringify(egress.privateJwk)}'\n` +
      `EGRESS_IDENTITY_PUBLIC_KEY='${JSON.stringify(egress.publicJwk)}'\n`,
  );
  process.exit(0);
}
if (args[0] === "migrate") {
  // Every service's schema, then exit (the Helm chart's pre-install/pre-upgrade Job).
  const { runMigrations } = await import("./migrate.ts");
  const { describeStartupError } = await import("./launch.ts");
  await runMigrations(process.env).catch((err: unknown) => {
    const line = describeStartupError(err);
    if (!line) throw err;
    process.stderr.write(`agentplane migrate: ${line}\n`);
    process.exit(1);
  });
  process.exit(0);
}
const targetArg = (args.find((a) => a.startsWith("--target="))?.slice("--target=".length) ?? "all").trim();
const targets = targetArg
  .split(",")
  .map((t) => t.trim())
  .filter(Boolean);
const unknown = targets.filter((t) => t !== "all" && !(t in TARGETS));

if (unknown.length > 0 || targets.length === 0 || (targets.includes("all") && targets.length > 1)) {
  process.stderr.write(
    `unknown --target=${targetArg}; one of: all, or a comma-separated list of ${Object.keys(TARGETS).join(", ")}\n`,
  );
  process.exit(2);
} else if (targets[0] === "all") {
  const { runAllInOne } = await import("./all-in-one.ts");
  const { describeStartupError } = await import("./launch.ts");
  await runAllInOne(process.env).catch((err: unknown) => {
    const line = describeStartupError(err);
    if (!line) throw err;
    process.stderr.write(`agentplane: ${line}\n`);
    process.exit(1);
  });
} else if (targets.length === 1) {
  const name = targets[0] as keyof typeof TARGETS;
  const { runTarget } = await import("./launch.ts");
  await runTarget(name, TARGETS[name]);
} else {
  const { runTargetList } = await import("./launch.ts");
  await runTargetList(targets);
}
