import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * One full garbage collection, once, when the all-in-one has started. Starting leaves garbage that
 * an idle process never collects: a first start's PGlite initialisation alone leaves about 250 MB
 * of buffers (initdb's instance and its data) that only a full collection returns, and V8 runs
 * none while nothing allocates. Without this, a first start sits at about twice the memory of a
 * restart until traffic happens to trigger one.
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
