import { describe, expect, it } from "vitest";
import { browserName } from "../src/lib/browser-name.ts";

describe("a session's browser in words", () => {
  it.each([
    [
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
      "Chrome 156 on Linux",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 Edg/140.0.0.0",
      "Edge 140 on Windows",
    ],
    ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:131.0) Gecko/20100101 Firefox/131.0", "Firefox 131 on macOS"],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
      "Safari 18 on macOS",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
      "Safari 18 on iOS",
    ],
    [
      "Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
      "Chrome 131 on Android",
    ],
    [
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",
      "Chrome (headless) 156 on Linux",
    ],
    ["curl/8.5.0", "curl/8.5.0"],
    ["agentplane-cli/1.4.0 node/24.21.0", "agentplane-cli/1.4.0"],
  ])("%s → %s", (ua, expected) => {
    expect(browserName(ua)).toBe(expected);
  });

  it("shows nothing for no User-Agent and shortens an unknown long one", () => {
    expect(browserName(undefined)).toBe("");
    expect(browserName("   ")).toBe("");
    expect(browserName("x".repeat(80))).toBe(`${"x".repeat(39)}…`);
  });
});
