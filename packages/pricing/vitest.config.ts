import { defineProject } from "vitest/config";

export default defineProject({ test: { name: "pricing", testTimeout: 30_000, hookTimeout: 60_000 } });
