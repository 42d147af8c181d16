import { isSessionCookiePart } from "@agentplane/contracts";

/** The name a Host header (`name` or `name:port`, any case) is for; undefined when there is none. */
export function hostName(host: string | undefined | null): string | undefined {
  const name = host?.trim().toLowerCase().replace(/:\d+$/, "");
  return name || undefined;
}

/**
 * A sandbox's `Set-Cookie` as the ingress passes it on to the browser of `host` (the sandbox
 * port's own name, e.g. `8000-web.sbx.example.com`), or undefined when it is dropped.
 *
 * Every sandbox is served under the one ingress domain, so a cookie a sandbox scopes to that
 * domain (or any parent) would reach every other sandbox's host: one tenant could plant cookies in
 * another's app (cookie tossing). A `Domain` attribute other than the host itself is taken off,
 * leaving the cookie host-only, on the host that set it. The console's session cookie (either
 * name) is never set from a sandbox at all: where the console is served from a parent domain, it
 * would sign the console's users in as whoever the sandbox chose.
 */
export function scopeSandboxCookie(setCookie: string, host: string | undefined): string | undefined {
  const [pair = "", ...attributes] = setCookie.split(";");
  if (isSessionCookiePart(pair)) return undefined;
  const own = hostName(host);
  const kept = attributes.filter((attribute) => {
    const eq = attribute.indexOf("=");
    if (eq < 0 || attribute.slice(0, eq).trim().toLowerCase() !== "domain") return true;
    const domain = attribute
      .slice(eq + 1)
      .trim()
      .toLowerCase()
      .replace(/^\./, "");
    return own !== undefined && domain === own;
  });
  return [pair, ...kept].join(";");
}

/**
 * The header lines of an upgrade's answer (a WebSocket handshake, or a refusal) with each
 * `Set-Cookie` scoped as scopeSandboxCookie does: browsers take cookies from a handshake too.
 */
export function scopeAnswerHeader(host: string | undefined): (name: string, value: string) => string | undefined {
  return (name, value) => (name.toLowerCase() === "set-cookie" ? scopeSandboxCookie(value, host) : value);
}
