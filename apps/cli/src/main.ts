#!/usr/bin/env node
// The `agentplane` command. `--version` answers before anything heavy is loaded.
import { enableUserCompileCache } from "./compile-cache.ts";
import { VERSION } from "./version.ts";

// A reader that stops early (`agentplane sandboxes list | head -1`) closes the pipe: the output
// nobody reads is dropped and the command ends quietly, with 0, instead of an EPIPE stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(0);
});

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  process.stdout.write(`${VERSION}\n`);
} else {
  // Later starts reuse the compiled (and type-stripped) modules of earlier ones.
  enableUserCompileCache();
  const { run } = await import("./run.ts");
  process.exitCode = await run(argv);
}
