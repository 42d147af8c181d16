// Links between the Markdown pages resolve: every relative link in README.md and docs/**/*.md (and
// the pages beside the code they link to) names a file or directory that exists, and an anchor
// (`page.md#section`, `#section`) names a heading of that page as GitHub spells it.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
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
});
