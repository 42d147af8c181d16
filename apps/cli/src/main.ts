#!/usr/bin/env node
// The `agentplane` command. `--version` answers before anything heavy is loaded.
import { VERSION } from "./version.ts";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const { run } = await import("./run.ts");
  process.exitCode = await run(argv);
}
