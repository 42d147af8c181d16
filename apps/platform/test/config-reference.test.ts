import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_GLOSSARY } from "../src/config-glossary.ts";
import {
  allVariables,
  CONFIG_REFERENCE_PATH,
  DEPLOYABLES,
  renderConfigReference,
  undescribedVariables,
} from "../src/config-reference.ts";

describe("the configuration reference (docs/configuration.md)", () => {
  it("describes every variable of every deployable's schema", () => {
    expect(undescribedVariables()).toEqual([]);
  });

  it("keeps no glossary entry for a variable no deployable reads", () => {
    const read = allVariables();
    const deployables = new Set(DEPLOYABLES.map((d) => d.name));
    const stale = Object.keys(CONFIG_GLOSSARY).filter((key) => {
      const [scope, name] = key.includes(":") ? key.split(":") : [undefined, key];
      return !read.has(name as string) || (scope !== undefined && !deployables.has(scope));
    });
    expect(stale).toEqual([]);
  });

  it("lists a schema's defaults and allowed values", () => {
    const text = renderConfigReference();
    expect(text).toMatch(/\| `RATE_LIMIT_PER_MINUTE` \| integer \| `1200` \|/);
    expect(text).toMatch(/\| `SANDBOX_LOCAL_ISOLATION` \| `bwrap`, `none` \|/);
    expect(text).toMatch(/\| `TENANCY_URL` \| URL \| \*\*required\*\* \|/);
  });

  it("is current: `npm run docs:config` rewrites it from the schemas", () => {
    expect(readFileSync(CONFIG_REFERENCE_PATH, "utf8"), "docs/configuration.md is stale: run npm run docs:config").toBe(
      renderConfigReference(),
    );
  });
});
