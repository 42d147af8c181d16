/** Labels typed one per line as `key=value` (`team=ml`), the API's `labels` object. */
export function parseLabels(text: string): { labels: Record<string, string>; error?: string } {
  const labels: Record<string, string> = {};
  for (const line of text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)) {
    const at = line.indexOf("=");
    if (at <= 0) return { labels, error: `"${line}": write key=value, one per line` };
    const key = line.slice(0, at).trim();
    if (key in labels) return { labels, error: `"${key}" is given twice` };
    labels[key] = line.slice(at + 1).trim();
  }
  return { labels };
}

/** The text `parseLabels` reads back to the same labels, sorted by key. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  return Object.entries(labels ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
}
