import { defineProject } from "vitest/config";

export default defineProject({ test: { name: "cli", testTimeout: 30_000, hookTimeout: 60_000 } });
