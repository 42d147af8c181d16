import { installProcessGuard } from "@agentplane/service-kit";
import { ConfigError } from "./config.ts";
import { startRuntime } from "./runtime.ts";

try {
  const runtime = await startRuntime();
  // Once serving, an error that escapes every handler (a client library's own, say, on a frame it
  // cannot read) is logged and counted instead of ending the agent, as in the all-in-one.
  installProcessGuard(runtime.deps.logger);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    // Holds the process open until the close is done (its last steps wait on an unreferenced
    // worker thread, which alone would let the process end before the database is closed).
    setTimeout(() => process.exit(1), 10_000);
    await runtime.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`agent-runtime: invalid configuration: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
