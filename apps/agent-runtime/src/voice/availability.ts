import type { RuntimeConfig } from "../config.ts";

/** Flags of every headless run of the meeting browser: nothing phoning home. */
export const BROWSER_ARGS = [
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export type VoiceAvailability =
  | {
      status: "available";
      /** Whether the meeting browser runs under Chromium's own sandbox. */
      sandboxed: boolean;
      /** Why it does not, when it does not. */
      unsandboxedReason?: string;
    }
  | { status: "off"; reason: string };

/** How the meeting browser is launched: its path, and with or without Chromium's sandbox. */
export function browserLaunchOptions(path: string, sandboxed: boolean) {
  // playwright passes --no-sandbox itself unless chromiumSandbox is set.
  return { executablePath: path, headless: true, chromiumSandbox: sandboxed, args: BROWSER_ARGS };
}

/** Whether this process runs as root, where Chromium refuses its sandbox. */
const runsAsRoot = () => process.getuid?.() === 0;

/**
 * Whether the voice tools are offered: a key for the realtime API and a browser that really
 * launches (the binary existing is not enough: a missing library only shows at launch).
 *
 * The meeting browser opens pages of other parties, so it runs under Chromium's sandbox where it
 * can (`VOICE_BROWSER_SANDBOX`): `on` requires it, `off` never uses it, and `auto` uses it unless
 * the runtime runs as root (Chromium refuses its sandbox to root) or the sandbox cannot start
 * here (no user namespaces, a seccomp profile refusing them), in which case the browser runs
 * without it and the reason is kept (the start logs it).
 */
export async function probeVoice(config: RuntimeConfig, timeoutMs = 20_000): Promise<VoiceAvailability> {
  if (!config.env.VOICE_API_KEY) return { status: "off", reason: "VOICE_API_KEY is not set" };
  const path = config.env.VOICE_BROWSER_PATH;
  const mode = config.env.VOICE_BROWSER_SANDBOX;
  if (mode === "off") {
    const failure = await tryLaunch(path, false, timeoutMs);
    return failure
      ? { status: "off", reason: `the browser at ${path} cannot launch: ${failure}` }
      : { status: "available", sandboxed: false, unsandboxedReason: "VOICE_BROWSER_SANDBOX is off" };
  }
  if (mode === "auto" && runsAsRoot()) {
    const failure = await tryLaunch(path, false, timeoutMs);
    return failure
      ? { status: "off", reason: `the browser at ${path} cannot launch: ${failure}` }
      : {
          status: "available",
          sandboxed: false,
          unsandboxedReason: "the runtime runs as root, to whom Chromium refuses its sandbox; run it as another user",
        };
  }
  const sandboxFailure = await tryLaunch(path, true, timeoutMs);
  if (!sandboxFailure) return { status: "available", sandboxed: true };
  if (mode === "on") {
    return {
      status: "off",
      reason: `the browser at ${path} cannot launch with its sandbox (VOICE_BROWSER_SANDBOX=on): ${sandboxFailure}`,
    };
  }
  const failure = await tryLaunch(path, false, timeoutMs);
  return failure
    ? { status: "off", reason: `the browser at ${path} cannot launch: ${failure}` }
    : {
        status: "available",
        sandboxed: false,
        unsandboxedReason: `Chromium's sandbox cannot start here (${sandboxFailure}); VOICE_BROWSER_SANDBOX=on would turn voice off instead`,
      };
}

/** Launches and closes the browser once; what went wrong, or undefined. */
async function tryLaunch(path: string, sandboxed: boolean, timeoutMs: number): Promise<string | undefined> {
  try {
    // Loaded only when voice is configured: the browser driver is ~30 MB of heap once imported.
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ ...browserLaunchOptions(path, sandboxed), timeout: timeoutMs });
    await browser.close();
    return undefined;
  } catch (err) {
    // playwright's message carries a long call log; its first line says what went wrong.
    return (err instanceof Error ? err.message : String(err)).split("\n")[0]?.slice(0, 300);
  }
}
