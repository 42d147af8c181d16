import type { RuntimeConfig } from "../config.ts";

/** Flags of every headless run of the meeting browser: root in a container, nothing phoning home. */
export const BROWSER_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export type VoiceAvailability = { status: "available" } | { status: "off"; reason: string };

/**
 * Whether the voice tools are offered: a key for the realtime API and a browser that really
 * launches (the binary existing is not enough: a missing library only shows at launch).
 */
export async function probeVoice(config: RuntimeConfig, timeoutMs = 20_000): Promise<VoiceAvailability> {
  if (!config.env.VOICE_API_KEY) return { status: "off", reason: "VOICE_API_KEY is not set" };
  const path = config.env.VOICE_BROWSER_PATH;
  try {
    // Loaded only when voice is configured: the browser driver is ~30 MB of heap once imported.
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({
      executablePath: path,
      headless: true,
      args: BROWSER_ARGS,
      timeout: timeoutMs,
    });
    await browser.close();
    return { status: "available" };
  } catch (err) {
    // playwright's message carries a long call log; its first line says what went wrong.
    const first = (err instanceof Error ? err.message : String(err)).split("\n")[0]?.slice(0, 300);
    return { status: "off", reason: `the browser at ${path} cannot launch: ${first}` };
  }
}
