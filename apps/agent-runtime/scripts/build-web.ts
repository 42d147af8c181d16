// Builds the runtime's web UI into apps/agent-runtime/web/dist (also done at start when stale, by
// running this script in a child process).
import { buildWebAssets } from "../src/web/build.ts";

const ok = await buildWebAssets({ info: (o, m) => console.log(m, o), warn: (o, m) => console.error(m, o) });
process.exit(ok ? 0 : 1);
