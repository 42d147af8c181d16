import { defineProject } from "vitest/config";

// Browser pages load their data asynchronously: an `expect.poll` waits up to 15 s for it (vitest's
// default of 1 s fails on a loaded machine, though the page is right a moment later).
export default defineProject({
  test: { name: "e2e", testTimeout: 120_000, hookTimeout: 180_000, expect: { poll: { timeout: 15_000 } } },
});
