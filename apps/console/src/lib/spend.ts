/** Spending limits as people read and write them: dollars, percentages, periods. */

export function usd(value: number): string {
  const digits = Math.abs(value) < 1 && value !== 0 ? 4 : 2;
  return `$${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: digits })}`;
}

/** How much of the limit is used, 0–100 (reserved spend counts: it is committed). */
export function usedPercent(status: { limitUsd: number; spentUsd: number; reservedUsd: number }): number {
  if (status.limitUsd <= 0) return 100;
  return Math.min(100, Math.round(((status.spentUsd + status.reservedUsd) / status.limitUsd) * 100));
}

/** Alert thresholds typed as "50, 80, 100%" → [50, 80, 100]: whole percentages, distinct, at most 10. */
export function parseThresholds(text: string): { thresholds?: number[]; error?: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { thresholds: [] };
  const parts = trimmed.split(/[\s,]+/).filter(Boolean);
  const values: number[] = [];
  for (const part of parts) {
    const n = Number(part.replace(/%$/, ""));
    if (!Number.isInteger(n) || n < 1 || n > 100) return { error: "Whole percentages from 1 to 100, e.g. 50, 80, 100" };
    values.push(n);
  }
  const distinct = [...new Set(values)].sort((a, b) => a - b);
  if (distinct.length > 10) return { error: "At most 10 thresholds" };
  return { thresholds: distinct };
}

export function formatThresholds(thresholds: number[]): string {
  return thresholds.join(", ");
}

/** A dollar amount typed by a person: 0 or more, rounded to cents; a positive one never rounds to 0. */
export function parseAmount(text: string): { amount?: number; error?: string } {
  const n = Number(text.trim().replace(/^\$/, ""));
  if (text.trim() === "" || !Number.isFinite(n) || n < 0) return { error: "An amount in US dollars, 0 or more" };
  const amount = Math.round(n * 100) / 100;
  // A positive amount under half a cent would become a limit of $0, which refuses every model call.
  if (n > 0 && amount === 0) return { error: "At least $0.01 (0 refuses every model call)" };
  return { amount };
}
