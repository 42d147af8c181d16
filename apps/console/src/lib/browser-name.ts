/**
 * A browser's User-Agent in the words a person recognises ("Chrome 156 on Linux"); the whole
 * string stays available beside it (a title) for whoever needs the details. Anything not a
 * known browser (a CLI, a script) shows its first product token.
 */
const BROWSERS: [name: string, pattern: RegExp][] = [
  ["Edge", /\bEdgA?\/(\d+)/],
  ["Opera", /\bOPR\/(\d+)/],
  ["Chrome (headless)", /\bHeadlessChrome\/(\d+)/],
  ["Firefox", /\b(?:Firefox|FxiOS)\/(\d+)/],
  ["Chrome", /\b(?:Chrome|CriOS|Chromium)\/(\d+)/],
  ["Safari", /\bVersion\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//],
];

const SYSTEMS: [name: string, pattern: RegExp][] = [
  ["iOS", /\b(?:iPhone|iPad|iPod)\b/],
  ["Android", /\bAndroid\b/],
  ["ChromeOS", /\bCrOS\b/],
  ["Windows", /\bWindows\b/],
  ["macOS", /\bMac OS X\b/],
  ["Linux", /\bLinux\b/],
];

export function browserName(userAgent: string | null | undefined): string {
  const ua = userAgent?.trim() ?? "";
  if (!ua) return "";
  const system = SYSTEMS.find(([, pattern]) => pattern.test(ua))?.[0];
  for (const [name, pattern] of BROWSERS) {
    const match = pattern.exec(ua);
    if (match) return `${name} ${match[1]}${system ? ` on ${system}` : ""}`;
  }
  const product = /^[^\s/]+(?:\/[^\s]+)?/.exec(ua)?.[0] ?? ua;
  return product.length > 40 ? `${product.slice(0, 39)}…` : product;
}
