import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * One full garbage collection, once, when the all-in-one has started. Starting leaves garbage
 * (migrations, module loading, the services' set-up) that an idle process never collects: V8 runs
 * no full collection while nothing allocates, so the process would sit on it until traffic
 * happened to trigger one.
 *
 * `gc` is exposed for the one call (V8's `--expose-gc`, read when a new context is created) and
 * hidden again, so nothing else can reach it.
 */
export function collectStartupGarbage(): void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) {
    exposed();
    return;
  }
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  setFlagsFromString("--no-expose-gc");
  gc();
}
