import { PassThrough } from "node:stream";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import type { Io } from "../src/context.ts";
import { branchOf, buildProgram } from "../src/program.ts";
import { Store } from "../src/store.ts";

// A cold start builds only the branch of the command tree the command line runs: it must be the
// same branch the whole tree has, or help, flags and suggestions would differ by how they were reached.

const quiet = new PassThrough() as unknown as NodeJS.WriteStream;
const io: Io = { env: {}, stdin: process.stdin, stdout: quiet, stderr: quiet };
const store = new Store({ AGENTPLANE_CONFIG_DIR: "/nonexistent" });

function describeTree(cmd: Command): string[] {
  return [cmd.helpInformation(), ...cmd.commands.flatMap(describeTree)];
}

describe("building one branch of the command tree", () => {
  it("finds the branch after global options, and wants the whole tree for help, completion or a typo", () => {
    expect(branchOf(["orgs", "list", "--json"])).toBe("orgs");
    expect(branchOf(["--url", "http://x", "sandboxes", "exec", "s", "--", "ls"])).toBe("sandboxes");
    expect(branchOf(["auth", "login"])).toBe("auth");
    expect(branchOf(["orgz", "list"])).toBeUndefined();
    expect(branchOf(["help", "orgs"])).toBeUndefined();
    expect(branchOf(["__complete", "or"])).toBeUndefined();
    expect(branchOf(["--help"])).toBeUndefined();
  });

  it("gives every top-level command the same subtree as the whole tree", () => {
    const full = buildProgram(io, store);
    for (const top of full.commands) {
      const branch = branchOf([top.name()]);
      if (branch === undefined) continue;
      const partial = buildProgram(io, store, branch).commands.find((c) => c.name() === top.name());
      expect(partial, top.name()).toBeDefined();
      expect(describeTree(partial!), top.name()).toEqual(describeTree(top));
    }
  });
});
