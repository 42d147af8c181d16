/** The sign-in page, told where to go back to afterwards. */
export function signInPath(next: string): string {
  return next && next !== "/" ? `/sign-in?next=${encodeURIComponent(next)}` : "/sign-in";
}
