import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../src/index.ts";

describe("the generated client", () => {
  it("matches the OpenAPI document the contracts build today", () => {
    const script = fileURLToPath(new URL("../scripts/generate.ts", import.meta.url));
    const run = spawnSync(process.execPath, [script, "--check"], { encoding: "utf8", timeout: 60_000 });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it("lists every operation once, with list operations marked", () => {
    const ids = OPERATIONS.map((op) => op.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(OPERATIONS.find((op) => op.id === "listAuditTrail")).toMatchObject({
      method: "GET",
      list: { paginated: true },
      pathParams: ["orgId"],
    });
    expect(OPERATIONS.find((op) => op.id === "execSandboxStream")?.websocket).toBe(true);
  });
});

describe("browser safety", () => {
  it("imports nothing Node-only from the entry points", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const dir = fileURLToPath(new URL("../src/", import.meta.url));
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const source = readFileSync(`${dir}${file}`, "utf8");
      const imports = [...source.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
      expect(
        imports.filter((i) => i?.startsWith("node:") || i === "ws"),
        file,
      ).toEqual([]);
      expect(source, file).not.toMatch(/\bprocess\.|\bBuffer\./);
    }
  });
});
