// The launcher: `--target=all` (default) runs the whole control plane in this process on embedded
// storage; any other target runs that one service as its own deployable (distributed mode).
import { generateInternalKeys } from "@agentplane/service-kit";

const TARGETS = {
  gateway: "../../api-gateway/src/main.ts",
  tenancy: "../../tenancy-svc/src/main.ts",
  audit: "../../audit-svc/src/main.ts",
  sandbox: "../../sandbox-svc/src/main.ts",
  runtime: "../../agent-runtime/src/main.ts",
} as const;

const args = process.argv.slice(2);
if (args[0] === "keys") {
  // Shared secrets for the distributed mode, printed as an env file.
  const keys = await generateInternalKeys();
  const { randomBytes } = await import("node:crypto");
  process.stdout.write(
    `INTERNAL_IDENTITY_PRIVATE_KEY=${JSON.stringify(keys.privateJwk)}\n` +
      `AGENTPLANE_SECRET_KEY=${randomBytes(32).toString("base64")}\n`,
  );
  process.exit(0);
}
const target = (args.find((a) => a.startsWith("--target="))?.slice("--target=".length) ?? "all").trim();

if (target === "all") {
  const { runAllInOne } = await import("./all-in-one.ts");
  await runAllInOne(process.env);
} else if (target in TARGETS) {
  await import(TARGETS[target as keyof typeof TARGETS]);
} else {
  process.stderr.write(`unknown --target=${target}; one of: all, ${Object.keys(TARGETS).join(", ")}\n`);
  process.exit(2);
}
