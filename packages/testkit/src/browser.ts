import { existsSync } from "node:fs";
import type { Browser, LaunchOptions, Page } from "playwright-core";
import { chromium } from "playwright-core";

/** Debian's `chromium` package; Playwright cannot download a browser of its own here. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Flags every headless run here uses: no sandbox (root in CI), nothing phoning home. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface BinaryAvailability {
  available: boolean;
  /** Text for `describe.skipIf(...)` names: why a suite was skipped. */
  reason: string;
}

/**
 * Checks that a program a suite needs is installed. Outside CI its absence skips the suite (the
 * reason in its name, which `.ci/run` looks for); with CI=true it throws, so the run fails.
 */
export function requireBinary(name: string, path: string): BinaryAvailability {
  const available = existsSync(path);
  if (!available && process.env.CI === "true") {
    throw new Error(`${name} is required in CI but not installed at ${path}`);
  }
  return { available, reason: available ? "" : ` (skipped: ${name} not installed at ${path})` };
}

export function requireChromium(): BinaryAvailability {
  return requireBinary("Chromium", CHROMIUM_PATH);
}

/** Launches the system Chromium headless through playwright-core. One per test file, please. */
export function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    ...options,
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
  });
}

/**
 * Presses Tab (or Shift+Tab) until the focused element answers `matches`, at most `limit` times;
 * an error naming what the focus passed through otherwise.
 */
export async function tabUntil(
  page: Page,
  matches: (el: FocusedElement) => boolean,
  { back = false, limit = 60 } = {},
): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press(back ? "Shift+Tab" : "Tab");
    const el = await focused(page);
    if (matches(el)) return;
    seen.push(el.label || el.text || el.tag);
  }
  throw new Error(`not reached by ${back ? "Shift+Tab" : "Tab"}; passed: ${seen.join(" | ")}`);
}

export interface FocusedElement {
  tag: string;
  text: string;
  /** aria-label, else the text of its first label. */
  label: string;
  /** Whether a focus indicator is drawn: a computed outline or box shadow. */
  ring: boolean;
  /**
   * The contrast of a solid outline's colour with the first opaque background behind the element
   * (WCAG 2.2 asks 3:1 of a focus indicator); null for the browser's own ring (`outline: auto`,
   * drawn in two tones) or a ring made of box shadows.
   */
  ringContrast: number | null;
}

/** What has the keyboard focus, and how its focus indicator is drawn. */
export function focused(page: Page): Promise<FocusedElement> {
  return page.evaluate(() => {
    // biome-ignore lint/suspicious/noExplicitAny: runs in the page; the tests' types have no DOM
    const w = globalThis as any;
    const el = w.document.activeElement;
    if (!el || el === w.document.body) return { text: "", label: "", tag: "", ring: false, ringContrast: null };
    const style = w.getComputedStyle(el);
    const outline = style.outlineStyle !== "none" && Number.parseFloat(style.outlineWidth) > 0;
    const ring = outline || (style.boxShadow !== "none" && style.boxShadow !== "");
    // Any CSS colour (oklch included) as sRGB bytes, through a 1×1 canvas.
    const ctx = w.document.createElement("canvas").getContext("2d", { willReadFrequently: true });
    const rgba = (color: string): number[] => {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = color;
      ctx.fillRect(0, 0, 1, 1);
      return [...ctx.getImageData(0, 0, 1, 1).data];
    };
    const luminance = ([r, g, b]: number[]) =>
      [r, g, b]
        .map((c = 0) => c / 255)
        .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
        .reduce((sum, c, k) => sum + c * [0.2126, 0.7152, 0.0722][k]!, 0);
    let ringContrast: number | null = null;
    if (outline && style.outlineStyle !== "auto") {
      let back = [255, 255, 255, 255];
      for (let node = el.parentElement; node; node = node.parentElement) {
        const bg = rgba(w.getComputedStyle(node).backgroundColor);
        if (bg[3]! > 250) {
          back = bg;
          break;
        }
      }
      const a = luminance(rgba(style.outlineColor));
      const b = luminance(back);
      ringContrast = Math.round(((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) * 100) / 100;
    }
    const label = el.getAttribute("aria-label") ?? el.labels?.[0]?.textContent ?? "";
    return {
      text: (el.textContent ?? "").trim(),
      label: label.trim(),
      tag: el.tagName.toLowerCase(),
      ring,
      ringContrast,
    };
  });
}

/** Whether the focus is inside an open dialog. */
export function focusInDialog(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { activeElement: { closest(s: string): unknown } | null } })
      .document;
    return Boolean(doc.activeElement?.closest('[role="dialog"]'));
  });
}
