import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { type AgentTool, toolError, toolResult } from "./types.ts";

export interface Skill {
  name: string;
  description: string;
  /** The SKILL.md file; its body is read only when the skill is used. */
  file: string;
}

const FrontMatter = z.object({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and hyphens"),
  description: z.string().min(1).max(1024),
});

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

/** Splits a SKILL.md into its YAML front matter and body; throws when the front matter is missing or invalid. */
export function parseSkillFile(text: string): { name: string; description: string; body: string } {
  const match = FRONT_MATTER.exec(text);
  if (!match) throw new Error("SKILL.md has no YAML front matter (--- … ---)");
  const meta = FrontMatter.safeParse(parseYaml(match[1] ?? ""));
  if (!meta.success) {
    throw new Error(meta.error.issues.map((i) => `${i.path.join(".") || "front matter"}: ${i.message}`).join("; "));
  }
  return { ...meta.data, body: (match[2] ?? "").trim() };
}

/**
 * The skills under AGENT_SKILLS_DIR in the Agent Skills layout (`<dir>/<skill>/SKILL.md`). The
 * folder is looked at again before each turn and re-read when a SKILL.md was added, removed or
 * changed, so an edit applies on the next turn without a restart.
 */
export class SkillCatalog {
  readonly dir: string;
  readonly #logger: Logger;
  #signature = "";
  #skills: Skill[] = [];

  constructor(dir: string, logger: Logger) {
    this.dir = dir;
    this.#logger = logger;
  }

  #files(): Array<{ file: string; mtime: number }> {
    if (!existsSync(this.dir)) return [];
    const out: Array<{ file: string; mtime: number }> = [];
    for (const entry of readdirSync(this.dir, { withFileTypes: true })) {
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      const file = join(this.dir, entry.name, "SKILL.md");
      try {
        out.push({ file, mtime: statSync(file).mtimeMs });
      } catch {
        // A folder without SKILL.md is not a skill.
      }
    }
    return out.sort((a, b) => a.file.localeCompare(b.file));
  }

  /** The current skills (re-read when the folder changed). */
  list(): Skill[] {
    const files = this.#files();
    const signature = files.map((f) => `${f.file}@${f.mtime}`).join("|");
    if (signature === this.#signature) return this.#skills;
    const skills: Skill[] = [];
    for (const { file } of files) {
      try {
        const { name, description } = parseSkillFile(readFileSync(file, "utf8"));
        if (skills.some((s) => s.name === name)) {
          this.#logger.warn({ file, skill: name }, "a skill with this name is already loaded; skipped");
          continue;
        }
        skills.push({ name, description, file });
      } catch (err) {
        this.#logger.warn({ file, err: (err as Error).message }, "skill skipped");
      }
    }
    this.#signature = signature;
    this.#skills = skills;
    this.#logger.info({ skills: skills.map((s) => s.name) }, "skills loaded");
    return skills;
  }

  /** The body of a skill, read now (the file may have changed since it was listed). */
  body(name: string): string | undefined {
    const skill = this.list().find((s) => s.name === name);
    if (!skill) return undefined;
    return parseSkillFile(readFileSync(skill.file, "utf8")).body;
  }

  /** The lines the system prompt shows: names and descriptions only. */
  promptSection(): string {
    const skills = this.list();
    if (skills.length === 0) return "";
    const lines = skills.map((s) => `- ${s.name}: ${s.description}`);
    return `Skills you can use (call use_skill with the name to load its instructions before following it):\n${lines.join("\n")}`;
  }
}

export function skillTool(catalog: SkillCatalog): AgentTool {
  return {
    name: "use_skill",
    description:
      "Load the full instructions of one of your skills by name (the names are listed in your instructions).",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: false,
    },
    handler(input) {
      const name = (input as { name?: unknown } | null)?.name;
      if (typeof name !== "string") return toolError("Invalid input: name must be a string");
      const body = catalog.body(name);
      if (body === undefined) {
        const known = catalog.list().map((s) => s.name);
        return toolError(`No skill named ${name}. Skills: ${known.join(", ") || "none"}`);
      }
      return toolResult({ name, instructions: body, folder: join(catalog.dir, name) });
    },
  };
}
