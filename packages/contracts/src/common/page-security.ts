/**
 * What the platform's own web pages are answered with (the console, and the agent runtime's UI,
 * served by the runtime itself and through the gateway): only their own origin's scripts and
 * connections, inline styles (React, the terminal and the editor set them), and no framing by
 * another site (clickjacking: the runtime's API takes no credential on a loopback address).
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Sent with every page and asset besides the policy. */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
};
