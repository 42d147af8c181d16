import { join } from "node:path";
import { parseCircular, parseDependencyTree } from "dpdm";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

/**
 * No module of an app's or a package's sources imports itself back through others, type-only
 * imports included: a type both sides need lives in a module of its own (or the lower of the two).
 * dpdm parses with the TypeScript compiler and follows relative and workspace imports.
 */
describe("import cycles", () => {
  it("none in apps/*/src and packages/*/src", { timeout: 120_000 }, async () => {
    const tree = await parseDependencyTree(
      ["apps/*/src/**/*.ts", "apps/*/src/**/*.tsx", "packages/*/src/**/*.ts", "packages/*/src/**/*.tsx"],
      { cwd: root, context: root, transform: false, skipDynamicImports: false },
    );
    expect(Object.keys(tree).length).toBeGreaterThan(500);
    const cycles = parseCircular(tree).map((cycle) => cycle.join(" -> "));
    expect(cycles).toEqual([]);
  });
});
