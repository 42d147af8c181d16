/** The origin the caller used, as the gateway reports it; undefined when it did not say. */
export function forwardedOrigin(headers: Headers): string | undefined {
  const host = headers.get("x-forwarded-host");
  const proto = headers.get("x-forwarded-proto");
  if (!host || (proto !== "http" && proto !== "https")) return undefined;
  const origin = `${proto}://${host}`;
  return URL.canParse(origin) && new URL(origin).host === host.toLowerCase() ? origin : undefined;
}
