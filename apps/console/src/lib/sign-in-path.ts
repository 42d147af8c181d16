/** The sign-in page, told where to go back to afterwards. */
export function signInPath(next: string): string {
  return next && next !== "/" ? `/sign-in?next=${encodeURIComponent(next)}` : "/sign-in";
}

/**
 * Where to go after signing in: only a plain path of this app, else `/`. As the server's rule
 * (tenancy-svc's sign-in return path): no `//host`, no backslash (`/\\host` is `//host` to a
 * browser) and no control characters (a browser drops tabs and newlines, so `/<tab>/host` would
 * become `//host`).
 */
export function safeNext(next: string | null): string {
  if (!next?.startsWith("/") || next.startsWith("//") || next.length > 2000) return "/";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  return /[\\\u0000-\u001f\u007f]/.test(next) ? "/" : next;
}

/**
 * A page the server renders (not a route of this app), which the browser loads after signing in:
 * its path alone. A sign-in link can come from anywhere, and `/device?code=…` from another site
 * would put its sender's device sign-in one click from approval; the page asks for the code the
 * person's device shows instead (as it does when opened from another site).
 */
export function serverPageAfterSignIn(next: string): string | undefined {
  const page = /^\/(device|activate)(?:[/?#]|$)/.exec(next);
  return page ? `/${page[1]}` : undefined;
}
