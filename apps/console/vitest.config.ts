import { defineProject } from "vitest/config";

export default defineProject({ test: { name: "console", include: ["test/**/*.test.{ts,tsx}"] } });
