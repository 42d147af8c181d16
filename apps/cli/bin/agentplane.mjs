#!/usr/bin/env node
// The installed entry point. Plain JavaScript, so the compile cache is on before the first
// TypeScript module is loaded (later starts reuse the type-stripped, compiled modules), and so an
// older Node says what to do instead of failing on a module it cannot load.
const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  process.stderr.write(
    `error: agentplane needs Node.js 24 or later (this is ${process.version}): install Node 24, or run it\n` +
      "from the checkout with `npm run -s cli -- <args>`, which provisions Node 24 for it\n",
  );
  process.exit(1);
}
const { enableUserCompileCache } = await import("../src/compile-cache.ts");
enableUserCompileCache();
await import("../src/main.ts");
