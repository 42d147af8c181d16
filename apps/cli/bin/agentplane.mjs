#!/usr/bin/env node
// The installed entry point. Plain JavaScript so the compile cache is on before the first
// TypeScript module is loaded: later starts reuse the type-stripped, compiled modules.
import { enableCompileCache } from "node:module";

enableCompileCache();
await import("../src/main.ts");
