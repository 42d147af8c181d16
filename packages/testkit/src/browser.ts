import { existsSync } from "node:fs";
import type { Browser, LaunchOptions } from "playwright-core";
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
