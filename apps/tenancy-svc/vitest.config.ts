import { defineProject } from "vitest/config";

// PGlite takes seconds to start and migrate on a small machine; suites open it in beforeAll.
export default defineProject({ test: { name: "tenancy-svc", testTimeout: 30_000, hookTimeout: 60_000 } });
