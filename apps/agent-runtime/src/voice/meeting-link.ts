/** Hosts of the meeting service whose links the agent joins (production: Google Meet). */
export const MEETING_HOSTS = ["meet.google.com"];

/** A meeting code as the service prints it: `abc-defg-hij`. */
const MEETING_CODE = /^\/[a-z]{3}-[a-z]{4}-[a-z]{3}$/;

/**
 * The meeting link in `raw`, or the reason it is not one. `hosts` are host[:port] values; a
 * loopback host may be plain http (the local meeting stand-in), every other host must be https.
 */
export function parseMeetingLink(raw: string, hosts: readonly string[] = MEETING_HOSTS): URL | { error: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { error: `"${raw}" is not a URL; expected a meeting link such as https://${hosts[0]}/abc-defg-hij` };
  }
  const loopback = url.hostname === "127.0.0.1" || url.hostname === "localhost";
  const schemeOk = url.protocol === "https:" || (loopback && url.protocol === "http:");
  if (!schemeOk || !hosts.includes(url.host) || !MEETING_CODE.test(url.pathname)) {
    return {
      error: `${url.href} is not a meeting link; expected https://${hosts[0]}/ followed by a meeting code such as abc-defg-hij`,
    };
  }
  return url;
}
