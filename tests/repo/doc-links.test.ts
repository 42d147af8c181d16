// Links between the Markdown pages resolve: every relative link in README.md and docs/**/*.md (and
// the pages beside the code they link to) names a file or directory that exists, and an anchor
// (`page.md#section`, `#section`) names a heading of that page as GitHub spells it. And every
// `agentplane …` command those pages show is one the CLI has (docs/cli is its generated reference).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

/** The Markdown text outside fenced code blocks and inline code spans. */
export function prose(markdown: string): string {
  return markdown
    .replace(/^( {0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1?\2[^\n]*$/gm, "")
    .replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, "");
}

/** GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens. */
export function slugOf(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a page offers: its headings (with GitHub's -1, -2 for repeats) and explicit ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^( {0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1?\2[^\n]*$/gm, "");
  for (const [, heading] of text.matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/gm)) {
    const slug = slugOf((heading ?? "").replace(/`/g, ""));
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id ?? "");
  return anchors;
}

/** The link targets of a page: inline links and images, and reference definitions. */
export function linksOf(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? "");
  const defined = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] ?? "");
  return [...inline, ...defined];
}

const pages = execFileSync("git", ["ls-files", "README.md", "docs/**.md", "*/README.md", "CONTRIBUTING.md"], {
  cwd: root,
  encoding: "utf8",
})
  .split("\n")
  .filter((p) => p.endsWith(".md"));

describe("links between the Markdown pages", () => {
  it("finds GitHub's anchors", () => {
    expect(slugOf("Webhook verification and redelivery (our addition)")).toBe(
      "webhook-verification-and-redelivery-our-addition",
    );
    expect(slugOf("Through the platform (/agent/)")).toBe("through-the-platform-agent");
    expect([...anchorsOf("# A\n## A\n```\n# not a heading\n```\n")]).toEqual(["a", "a-1"]);
    expect(linksOf('[a](x.md) `[b](y.md)` [c](z.md#q "t")\n```\n[d](w.md)\n```\n[e]: v.md\n')).toEqual([
      "x.md",
      "z.md#q",
      "v.md",
    ]);
  });

  it("checks README.md and every page under docs/", () => {
    expect(pages).toContain("README.md");
    expect(pages.filter((p) => p.startsWith("docs/")).length).toBeGreaterThan(20);
  });

  it("resolves every relative link and anchor", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), "utf8");
      for (const link of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith("//")) continue; // another site
        const [pathPart = "", anchor] = link.split("#", 2);
        const path = decodeURIComponent(pathPart.split("?")[0] ?? "");
        const target =
          path === ""
            ? join(root, page)
            : path.startsWith("/")
              ? join(root, path)
              : join(dirname(join(root, page)), path);
        if (!existsSync(target)) {
          broken.push(`${page}: ${link} (no ${relative(root, target)})`);
          continue;
        }
        if (anchor && statSync(target).isFile() && target.endsWith(".md")) {
          if (!anchorsOf(readFileSync(target, "utf8")).has(anchor.toLowerCase()))
            broken.push(`${page}: ${link} (no heading #${anchor} in ${relative(root, target)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("names only agentplane commands that exist", () => {
    // The command tree, from the generated reference's headings: `## agentplane auth sessions`.
    const commands = new Set<string>();
    for (const file of readdirSync(join(root, "docs/cli"))) {
      const text = readFileSync(join(root, "docs/cli", file), "utf8");
      for (const [, name] of text.matchAll(/^#{1,6} agentplane ([a-z0-9 -]+)$/gm)) commands.add(name ?? "");
    }
    expect(commands).toContain("auth sessions list");
    const hasChildren = (name: string) => [...commands].some((c) => c.startsWith(`${name} `));
    const broken: string[] = [];
    for (const page of pages.filter((p) => !p.startsWith("docs/cli/") && !p.startsWith("docs/decisions/"))) {
      const text = readFileSync(join(root, page), "utf8");
      const shown = [
        ...[...text.matchAll(/`agentplane ([^`]*)`/g)].map((m) => m[1] ?? ""),
        ...[...text.matchAll(/^(?:\$ )?agentplane (.*)$/gm)].map((m) => m[1] ?? ""),
      ];
      for (const line of shown) {
        const words = line.split(/\s+/);
        if (!words[0] || words[0].startsWith("-") || words[0] === "help") continue; // flags, `help <topic>`
        let name = "";
        for (const word of words) {
          const next = name ? `${name} ${word}` : word;
          if (!commands.has(next)) break;
          name = next;
        }
        // A command with subcommands takes no arguments of its own: the next word must be one.
        const next = words[name ? name.split(" ").length : 0];
        if (!name || (hasChildren(name) && next && !next.startsWith("-"))) broken.push(`${page}: agentplane ${line}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
