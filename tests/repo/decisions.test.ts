import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const dir = join(root, "docs/decisions");

describe("docs/decisions", () => {
  const files = readdirSync(dir).filter((f) => f.endsWith(".md"));

  it("numbers every decision once, its title carrying the number of its file", () => {
    const numbers = files.map((f) => f.slice(0, 4));
    expect(numbers.every((n) => /^\d{4}$/.test(n))).toBe(true);
    expect(numbers.filter((n, i) => numbers.indexOf(n) !== i)).toEqual([]);
    for (const file of files) {
      const title = readFileSync(join(dir, file), "utf8").split("\n")[0] ?? "";
      expect(title, file).toMatch(new RegExp(`^# ${file.slice(0, 4)}\\D`));
    }
  });

  it("is linked only by names that exist", () => {
    const tracked = execFileSync("git", ["ls-files", "*.md", "*.ts", "*.tsx", "*.mjs"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
    const broken: string[] = [];
    for (const path of tracked) {
      const text = readFileSync(join(root, path), "utf8");
      for (const [, name] of text.matchAll(/decisions\/(\d{4}-[\w-]+)\.md/g)) {
        if (!files.includes(`${name}.md`)) broken.push(`${path}: ${name}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
