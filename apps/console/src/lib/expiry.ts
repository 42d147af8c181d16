/**
 * Human token lifetimes: `30d`, `12h`, `2w`, `1y` (or empty for none), turned into the absolute
 * `expiresAt` the API takes. Returns an error message for anything else.
 */
const UNITS: Record<string, number> = { m: 60, h: 3600, d: 86_400, w: 7 * 86_400, y: 365 * 86_400 };

export function parseExpiry(text: string, now = Date.now()): { expiresAt?: string; error?: string } {
  const value = text.trim().toLowerCase();
  if (!value || value === "never") return {};
  const match = /^(\d{1,4})\s*([mhdwy])$/.exec(value);
  if (!match) return { error: "Use a number and a unit: 30d, 12h, 2w, 1y (or leave empty for no expiry)" };
  const amount = Number(match[1]);
  if (amount === 0) return { error: "The lifetime must be more than zero" };
  const seconds = amount * UNITS[match[2]!]!;
  if (seconds > 10 * 365 * 86_400) return { error: "At most ten years" };
  return { expiresAt: new Date(now + seconds * 1000).toISOString() };
}
