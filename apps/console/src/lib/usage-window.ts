/** The usage page's window, whole UTC days ending today, kept in the URL as `?days=`. */
export const WINDOWS = [7, 30, 90] as const;

export function readDays(value: string | null): number {
  const n = Number(value);
  return (WINDOWS as readonly number[]).includes(n) ? n : 30;
}

/** From the start of the first day to the end of today (UTC), as the API's ISO bounds. */
export function usageWindow(days: number, now = Date.now()): { from: string; to: string } {
  const today = new Date(now);
  const start = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (days - 1));
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1);
  return { from: new Date(start).toISOString(), to: new Date(end).toISOString() };
}

/** Chart rows from the API's groups: the label people read and the cost, largest first, the rest folded. */
export function groupRows(
  groups: { key: string | null; costUsd: number; requests: number }[],
  names: Record<string, string> = {},
  max = 8,
): { label: string; costUsd: number; requests: number }[] {
  const sorted = [...groups].sort((a, b) => b.costUsd - a.costUsd);
  const rows = sorted.slice(0, max).map((g) => ({
    label: g.key === null ? "(none)" : (names[g.key] ?? g.key),
    costUsd: g.costUsd,
    requests: g.requests,
  }));
  const rest = sorted.slice(max);
  if (rest.length) {
    rows.push({
      label: `${rest.length} more`,
      costUsd: rest.reduce((s, g) => s + g.costUsd, 0),
      requests: rest.reduce((s, g) => s + g.requests, 0),
    });
  }
  return rows;
}
