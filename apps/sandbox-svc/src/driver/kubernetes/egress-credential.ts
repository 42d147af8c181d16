import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { SandboxRuntimeSpec } from "../types.ts";
import { type KubernetesPlacement, proxyEnv } from "./objects.ts";

/**
 * Per-sandbox credentials for the cluster's egress proxy. A sandbox Pod reaches the outside only
 * through the proxy (its NetworkPolicy), and names itself there with `Proxy-Authorization: Basic
 * <sandbox id>:<credential>`, the credential an HMAC of its id under a key derived from the
 * platform's secret. sandbox-svc (which writes it into the sandbox's Secret) and the proxy (which
 * verifies it) share only that secret: no table, and one sandbox's credential says nothing about
 * another's.
 */
export class EgressCredentials {
  private readonly key: Buffer;

  /** `secret`: the platform's `AGENTPLANE_SECRET_KEY` (the key is derived from it, never used as is). */
  constructor(secret: string) {
    if (secret.length < 16) throw new Error("the egress credential secret is too short");
    this.key = Buffer.from(hkdfSync("sha256", secret, "agentplane", "sandbox egress proxy credential v1", 32));
  }

  /** The credential of one sandbox. */
  credential(sandboxId: string): string {
    return createHmac("sha256", this.key).update(sandboxId).digest("base64url");
  }

  /** The proxy URL a sandbox's tools read (`HTTPS_PROXY`…), its credential in the userinfo. */
  proxyUrl(sandboxId: string, proxy: URL): string {
    const url = new URL(proxy);
    url.username = sandboxId;
    url.password = this.credential(sandboxId);
    return url.toString().replace(/\/$/, "");
  }

  /** The sandbox a `Proxy-Authorization` header proves, or undefined. */
  verify(header: string | undefined): string | undefined {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header?.trim() ?? "");
    if (!m) return undefined;
    const decoded = Buffer.from(m[1] as string, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon <= 0) return undefined;
    // Clients send the URL's userinfo as written: ids and base64url need no percent-decoding.
    const sandboxId = decoded.slice(0, colon);
    const given = Buffer.from(decoded.slice(colon + 1));
    if (!/^[a-z0-9_]{1,64}$/.test(sandboxId)) return undefined;
    const expected = Buffer.from(this.credential(sandboxId));
    return given.length === expected.length && timingSafeEqual(given, expected) ? sandboxId : undefined;
  }
}

/**
 * A sandbox's proxy variables, its own credential in them; none without an egress proxy. The
 * proxy's name is resolved here (sandbox-svc runs in the cluster): sandboxes have no DNS, their only
 * egress is the proxy's address.
 */
export async function sandboxProxyEnv(
  credentials: EgressCredentials | undefined,
  placement: KubernetesPlacement,
  spec: Pick<SandboxRuntimeSpec, "id" | "slug">,
): Promise<Record<string, string>> {
  if (!placement.egressProxyUrl || !credentials) return {};
  const url = new URL(placement.egressProxyUrl);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0) {
    const { address, family } = await lookup(host);
    url.hostname = family === 6 ? `[${address}]` : address;
  }
  return proxyEnv(credentials.proxyUrl(spec.id, url), spec.slug);
}
