import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
export const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), "..", "screenshots");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * axe-core's serious and critical findings on the page as it is now (the admin UI's bar). axe is
 * evaluated through the DevTools protocol, which the page's content security policy does not govern.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // The callbacks run in the page; the test's own types know no DOM, hence globalThis.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** How far the page scrolls sideways (0 when it fits the viewport). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const w = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number } } };
    return w.document.documentElement.scrollWidth - w.innerWidth;
  });
}

/**
 * axe-core's WCAG 2 A and AA rules (what an accessibility review asks for) and its best practices
 * on the page as it is now: each finding as `page: rule (impact) ×nodes at …`. Blocking: a serious
 * or critical WCAG finding, or any best-practice one (landmarks, heading order, …).
 */
export async function wcagFindings(page: Page, name: string): Promise<{ text: string; blocking: boolean }[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  const run = (values: string[]) =>
    page.evaluate(async (tags) => {
      const g = globalThis as unknown as {
        document: unknown;
        axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
      };
      return (await g.axe.run(g.document, { runOnly: { type: "tag", values: tags } })).violations;
    }, values);
  const describe = (v: AxeViolation) =>
    `${name}: ${v.id} (${v.impact}) ×${v.nodes.length} at ${v.nodes.map((n) => n.target.join(" ")).join("; ")}`;
  return [
    ...(await run(["wcag2a", "wcag2aa"])).map((v) => ({
      text: describe(v),
      blocking: v.impact === "serious" || v.impact === "critical",
    })),
    ...(await run(["best-practice"])).map((v) => ({ text: `${describe(v)} (best practice)`, blocking: true })),
  ];
}
