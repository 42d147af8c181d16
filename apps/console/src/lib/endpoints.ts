/**
 * AWS endpoint overrides typed one per line as `service=url` (`sts=https://sts.internal`), for
 * private or VPC endpoints; the API's `endpoints` object.
 */
export function parseEndpoints(text: string): { endpoints?: Record<string, string>; error?: string } {
  const endpoints: Record<string, string> = {};
  for (const line of text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)) {
    const match = /^([a-z0-9-]+)\s*=\s*(\S+)$/i.exec(line);
    if (!match) return { error: `"${line}": write service=url, one per line` };
    try {
      new URL(match[2]!);
    } catch {
      return { error: `"${match[2]}" is not a URL` };
    }
    endpoints[match[1]!.toLowerCase()] = match[2]!;
  }
  return { endpoints };
}
