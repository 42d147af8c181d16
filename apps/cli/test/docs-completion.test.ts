import { execFileSync } from "node:child_process";
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { renderDocs } from "../src/docs.ts";
import { MAIN, runInProcess, tempConfigDir } from "./harness.ts";

describe("the generated reference (golden --help texts)", () => {
  it("docs/cli is what the command tree prints today: run npm run cli:docs after a change", () => {
    const dir = fileURLToPath(new URL("../../../docs/cli/", import.meta.url));
    const files = renderDocs();
    expect(readdirSync(dir).sort()).toEqual(Object.keys(files).sort());
    for (const [name, text] of Object.entries(files)) expect(readFileSync(join(dir, name), "utf8"), name).toBe(text);
    expect(files["sandboxes.md"]).toContain("Usage: agentplane sandboxes exec [options] <sandbox> [command...]");
  });
});

describe("completion", () => {
  const env = { AGENTPLANE_CONFIG_DIR: "/nonexistent", AGENTPLANE_URL: "http://127.0.0.1:9" };
  const complete = async (...words: string[]) =>
    (await runInProcess(["__complete", ...words], env)).stdout.split("\n").filter(Boolean);

  it("completes nouns, verbs, flags and --json field names", async () => {
    expect(await complete("sa")).toEqual(["sandbox-tokens", "sandboxes"]);
    expect(await complete("sandboxes", "ex")).toEqual(["exec"]);
    expect(await complete("orgs", "list", "--j")).toEqual(["--jq", "--json"]);
    expect(await complete("sandboxes", "list", "--json", "st")).toEqual(expect.arrayContaining(["state", "startedAt"]));
    // No installation reachable: ids are left out quietly, never an error.
    expect(await complete("sandboxes", "get", "")).toEqual([]);
  });

  it("drives bash's completion through the printed script", () => {
    const bin = tempConfigDir();
    try {
      // `agentplane` on PATH as a tiny wrapper around this checkout's entry point.
      const wrapper = join(bin.dir, "agentplane");
      writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
      chmodSync(wrapper, 0o755);
      const script = execFileSync(process.execPath, [MAIN, "completion", "bash"], { encoding: "utf8" });
      const out = execFileSync(
        "bash",
        [
          "-c",
          `${script}\nCOMP_WORDS=(agentplane orgs l); COMP_CWORD=2; _agentplane; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: "utf8", env: { ...process.env, ...env, PATH: `${bin.dir}:${process.env.PATH}` } },
      );
      expect(out).toBe("list\n");
    } finally {
      bin.remove();
    }
    for (const shell of ["zsh", "fish"]) {
      expect(execFileSync(process.execPath, [MAIN, "completion", shell], { encoding: "utf8" })).toContain("__complete");
    }
  });
});
