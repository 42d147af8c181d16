import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { REPO_ROOT } from "../processes.ts";

/** Screenshots of the console's pages (1280×800), kept as the run's artifacts (gitignored). */
export const ARTIFACTS = join(REPO_ROOT, "artifacts", "console");

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core run inside the page (evaluated through the DevTools protocol, which the page's content
 * security policy does not govern): the serious and critical violations, described.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join("; ")}`);
}

/** Signs in on the console's sign-in page with an API token and waits for the signed-in frame. */
export async function signInWithToken(page: Page, baseUrl: string, token: string, next = "/"): Promise<void> {
  await page.goto(`${baseUrl}/sign-in${next === "/" ? "" : `?next=${encodeURIComponent(next)}`}`);
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/** Whether the element has the keyboard focus (the tests' types have no DOM: `matches` is declared here). */
export function hasFocus(locator: Locator): Promise<boolean> {
  return locator.evaluate((el) => (el as unknown as { matches(selector: string): boolean }).matches(":focus"));
}

export interface AxeFinding {
  page: string;
  id: string;
  impact: string | null;
  nodes: number;
  targets: string;
}

/** The rule sets run by `wcagFindings`: WCAG 2 A and AA, what an accessibility review asks for. */
export const WCAG_TAGS = ["wcag2a", "wcag2aa"];

/** axe-core's findings for `tags` on the page as it is now, whatever their impact, named after `name`. */
export async function wcagFindings(page: Page, name: string, tags = WCAG_TAGS): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async (values) => {
    const axe = (
      globalThis as unknown as {
        axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const context = (globalThis as unknown as { document: unknown }).document;
    return (await axe.run(context, { runOnly: { type: "tag", values } })).violations;
  }, tags);
  return violations.map((v) => ({
    page: name,
    id: v.id,
    impact: v.impact,
    nodes: v.nodes.length,
    targets: v.nodes.map((n) => n.target.join(" ")).join("; "),
  }));
}

/** The findings that fail a page: serious or critical. */
export function blocking(findings: AxeFinding[]): string[] {
  return findings
    .filter((f) => f.impact === "serious" || f.impact === "critical")
    .map((f) => `${f.page}: ${f.id} (${f.impact}) ×${f.nodes} at ${f.targets}`);
}
