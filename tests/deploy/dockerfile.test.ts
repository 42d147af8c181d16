import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DockerfileParser, type Instruction, type JSONInstruction } from "dockerfile-ast";
import { describe, expect, it } from "vitest";

// No Docker engine runs here: the image is checked by parsing its Dockerfile (dockerfile-ast, the
// parser of the VS Code Docker language server) against the rules the build must keep.
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const text = readFileSync(join(root, "infra/Dockerfile"), "utf8");
const dockerfile = DockerfileParser.parse(text);

interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

/** Instructions grouped by the stage they belong to (FROM … AS name). */
function stages(): Stage[] {
  const out: Stage[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === "FROM") {
      const args = instruction.getArguments().map((a) => a.getValue());
      out.push({ name: args[2] ?? "", base: args[0] ?? "", instructions: [] });
    } else out.at(-1)?.instructions.push(instruction);
  }
  return out;
}

const stage = (name: string) => stages().find((s) => s.name === name) as Stage;
const runs = (s: Stage) =>
  s.instructions.filter((i) => i.getKeyword() === "RUN").map((i) => i.getArgumentsContent() ?? "");
/** A stage's instructions with those of the stages it is built FROM. */
function lineage(name: string): Instruction[] {
  const s = stage(name);
  return [...(stages().some((o) => o.name === s.base) ? lineage(s.base) : []), ...s.instructions];
}

const VARIANTS = ["all-in-one", "service", "cluster-relay"];

/**
 * Whether a .dockerignore leaves `path` out of the build context, as Docker matches: each pattern
 * anchored at the context's root (`**` any number of directories, `*` and `?` within one), a
 * directory left out with everything under it, a later `!pattern` taking a path back.
 */
function dockerIgnored(dockerignore: string, path: string): boolean {
  const toRegExp = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/^\/+|\/+$/g, "")
        .split(/(\*\*\/|\*\*|\*|\?)/)
        .map((part) =>
          part === "**/"
            ? "(?:.*/)?"
            : part === "**"
              ? ".*"
              : part === "*"
                ? "[^/]*"
                : part === "?"
                  ? "[^/]"
                  : part.replace(/[.+^${}()|[\]\\]/g, "\\$&"),
        )
        .join("")}$`,
    );
  const parts = path.split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let ignored = false;
  for (const line of dockerignore.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    const re = toRegExp(negated ? line.slice(1) : line);
    if (prefixes.some((p) => re.test(p))) ignored = !negated;
  }
  return ignored;
}

describe("infra/Dockerfile", () => {
  it("is a multi-stage build whose default (last) stage is the all-in-one", () => {
    expect(stages().map((s) => s.name)).toEqual([
      "toolchain",
      "dependencies",
      "build",
      "runtime",
      "cluster-relay",
      "service",
      "all-in-one",
    ]);
    const nodeImage = dockerfile.getInitialARGs().find((a) => a.getProperty()?.getName() === "NODE_IMAGE");
    // A pinned major on Debian, never `latest`.
    expect(nodeImage?.getProperty()?.getValue()).toMatch(/^node:\d+-bookworm-slim$/);
  });

  it("installs dependencies from the lockfile alone before any source is copied", () => {
    const dependencies = stage("dependencies").instructions.map((i) => `${i.getKeyword()} ${i.getArgumentsContent()}`);
    expect(dependencies).toEqual(["COPY pnpm-lock.yaml pnpm-workspace.yaml ./", "RUN pnpm fetch"]);
    expect(runs(stage("build"))[0]).toMatch(/^pnpm install --offline --frozen-lockfile/);
    const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { packageManager: string })
      .packageManager;
    const pinned = dockerfile.getInitialARGs().find((a) => a.getProperty()?.getName() === "PNPM_VERSION");
    expect(`pnpm@${pinned?.getProperty()?.getValue()}`).toBe(version);
  });

  it("deploys each deployable with production dependencies only", () => {
    const build = runs(stage("build")).join(" ");
    for (const pkg of ["@agentplane/platform", "@agentplane/cluster-relay"]) {
      expect(build).toMatch(new RegExp(`pnpm --filter ${pkg} deploy [^&]*--prod`));
    }
    // Runtime stages take the deployed trees only, never the build's sources or its node_modules.
    const froms = dockerfile.getFROMs();
    for (const copy of dockerfile.getCOPYs()) {
      const line = copy.getRange().start.line;
      const from = froms.filter((f) => f.getRange().start.line < line).at(-1);
      if (!VARIANTS.includes(from?.getBuildStage() ?? "")) continue;
      const flags = Object.fromEntries(copy.getFlags().map((f) => [f.getName(), f.getValue()]));
      expect(flags).toEqual({ from: "build", chown: "root:root" });
      expect(copy.getArgumentsContent()).toMatch(/^\/srv\/(platform|relay) \/app$/);
    }
  });

  it("runs every variant as a non-root user under tini", () => {
    for (const name of VARIANTS) {
      const instructions = lineage(name);
      const user = instructions
        .filter((i) => i.getKeyword() === "USER")
        .at(-1)
        ?.getArgumentsContent();
      expect(user, name).toMatch(/^[1-9]\d*$/);
      const entrypoint = instructions.filter((i) => i.getKeyword() === "ENTRYPOINT").at(-1) as JSONInstruction;
      expect(
        entrypoint
          .getJSONStrings()
          .map((s) => s.getJSONValue())
          .slice(0, 3),
        name,
      ).toEqual(["tini", "--", "node"]);
    }
  });

  it("starts the all-in-one with the V8 flags of `npm start` and of the start benchmark", () => {
    const entrypoint = lineage("all-in-one")
      .filter((i) => i.getKeyword() === "ENTRYPOINT")
      .at(-1) as JSONInstruction;
    const words = entrypoint.getJSONStrings().map((s) => s.getJSONValue());
    const imageFlags = words.slice(words.indexOf("node") + 1, words.indexOf("apps/platform/src/main.ts"));
    const listed = /const ALL_IN_ONE_FLAGS = \[([^\]]*)\]/.exec(
      readFileSync(join(root, "scripts/bootstrap.mjs"), "utf8"),
    );
    const bootstrapFlags = [...(listed?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    expect(imageFlags).toContain("--liftoff-only");
    expect(bootstrapFlags).toEqual(imageFlags);
    const bench = readFileSync(join(root, "bench/platform-start.ts"), "utf8");
    expect(bench).toContain(`spawn(process.execPath, [${imageFlags.map((f) => JSON.stringify(f)).join(", ")}, MAIN]`);
  });

  it("carries bubblewrap only in the all-in-one, and Chromium only where the agent runtime runs", () => {
    for (const name of VARIANTS) {
      const installs = lineage(name)
        .filter((i) => i.getKeyword() === "RUN")
        .map((i) => i.getArgumentsContent() ?? "")
        .join("\n");
      expect(installs.includes("bubblewrap"), name).toBe(name === "all-in-one");
      // The voice tools need a launchable browser; the relay never runs the agent runtime.
      expect(/--no-install-recommends [^&]*\bchromium\b/.test(installs), name).toBe(name !== "cluster-relay");
    }
  });

  it("keeps apt layers small", () => {
    for (const s of stages()) {
      for (const run of runs(s).filter((r) => r.includes("apt-get install"))) {
        expect(run).toContain("--no-install-recommends");
        expect(run).toContain("rm -rf /var/lib/apt/lists/*");
      }
    }
  });

  it("sends no node_modules or git history to the build", () => {
    const ignore = readFileSync(join(root, "infra/Dockerfile.dockerignore"), "utf8").split("\n");
    expect(ignore).toEqual(expect.arrayContaining(["**/node_modules", ".git"]));
  });

  it("sends no data directory and no .env file to the build, at any depth", () => {
    const ignore = readFileSync(join(root, "infra/Dockerfile.dockerignore"), "utf8");
    // A service started from its own directory keeps its data (keys, SQLite) in <app>/.agentplane.
    for (const path of [".agentplane/keys.json", "apps/platform/.agentplane/agent.db", ".env", "apps/x/.env.local"]) {
      expect(dockerIgnored(ignore, path), path).toBe(true);
    }
    for (const path of ["apps/platform/src/main.ts", "pnpm-lock.yaml", "apps/x/src/env.ts"]) {
      expect(dockerIgnored(ignore, path), path).toBe(false);
    }
  });
});

describe("infra/deploy-layout.mjs", () => {
  it("moves a deployed package and its workspace dependencies out of node_modules, as in the repository", () => {
    const dir = mkdtempSync(join(tmpdir(), "layout-"));
    try {
      const repo = join(dir, "repo");
      for (const [path, name] of [
        ["apps/platform", "@agentplane/platform"],
        ["packages/db", "@agentplane/db"],
      ] as const) {
        mkdirSync(join(repo, path), { recursive: true });
        writeFileSync(join(repo, path, "package.json"), JSON.stringify({ name }));
      }
      const deployed = join(dir, "deployed");
      mkdirSync(join(deployed, "node_modules/@agentplane/db/src"), { recursive: true });
      mkdirSync(join(deployed, "node_modules/kysely"), { recursive: true });
      writeFileSync(join(deployed, "package.json"), JSON.stringify({ name: "@agentplane/platform" }));
      writeFileSync(join(deployed, "node_modules/@agentplane/db/src/index.ts"), "export {};");
      execFileSync(process.execPath, [join(root, "infra/deploy-layout.mjs"), deployed, join(dir, "out"), repo]);
      const out = join(dir, "out");
      expect(existsSync(join(out, "apps/platform/package.json"))).toBe(true);
      expect(existsSync(join(out, "packages/db/src/index.ts"))).toBe(true);
      expect(existsSync(join(out, "node_modules/kysely"))).toBe(true);
      expect(lstatSync(join(out, "node_modules/@agentplane/db")).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(out, "node_modules/@agentplane/db"))).toBe("../../packages/db");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
