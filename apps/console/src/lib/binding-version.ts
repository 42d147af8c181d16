/** The version a binding follows, as typed: `latest` (or nothing), or a version number to pin. */
export function parseBindingVersion(text: string): { version?: "latest" | number; error?: string } {
  const typed = text.trim().toLowerCase();
  if (typed === "" || typed === "latest") return { version: "latest" };
  if (!/^\d+$/.test(typed) || Number(typed) < 1) return { error: "latest, or a version number such as 1 or 2" };
  return { version: Number(typed) };
}
