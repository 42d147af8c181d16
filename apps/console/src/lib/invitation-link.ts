/** The token of an invitation's link rides in the fragment (`#token=…`), which no server sees. */
export function linkToken(hash: string): string {
  return new URLSearchParams(hash.replace(/^#/, "")).get("token") ?? "";
}
