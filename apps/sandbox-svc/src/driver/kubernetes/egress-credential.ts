import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { z } from "zod";
import type { SandboxRuntimeSpec } from "../types.ts";
import { type KubernetesPlacement, proxyEnv } from "./objects.ts";

/** How many bytes the credential key has at least (`SANDBOX_EGRESS_CREDENTIAL_KEY`, base64). */
export const EGRESS_CREDENTIAL_KEY_BYTES = 32;

/**
 * The credential key derived from the platform's `AGENTPLANE_SECRET_KEY`, base64: what sandbox-svc
 * signs with where no `SANDBOX_EGRESS_CREDENTIAL_KEY` is set, and what the chart's key hook writes
 * as that key into an existing installation's keys Secret, so the credentials of sandboxes started
 * before stay valid (decision 0052).
 */
export function egressCredentialKeyFrom(secret: string): string {
  if (secret.length < 16) throw new Error("the egress credential secret is too short");
  return Buffer.from(hkdfSync("sha256", secret, "agentplane", "sandbox egress proxy credential v1", 32)).toString(
    "base64",
  );
}

/** `SANDBOX_EGRESS_CREDENTIAL_KEY` as read at start: base64 of at least 32 bytes (a bad value names the variable). */
export const EgressCredentialKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, "base64")
  .refine((s) => Buffer.from(s, "base64").length >= EGRESS_CREDENTIAL_KEY_BYTES, {
    message: `at least ${EGRESS_CREDENTIAL_KEY_BYTES} bytes, base64 (e.g. \`head -c 32 /dev/urandom | base64\`)`,
  });

/**
 * Per-sandbox credentials for the cluster's egress proxy. A sandbox Pod reaches the outside only
 * through the proxy (its NetworkPolicy), and names itself there with `Proxy-Authorization: Basic
 * <sandbox id>:<credential>`, the credential an HMAC of its id under the egress credential key.
 * sandbox-svc (which writes it into the sandbox's Secret) and the proxy (which verifies it) share
 * only that key: no table, and one sandbox's credential says nothing about another's. The key is
 * its own (`SANDBOX_EGRESS_CREDENTIAL_KEY`), never the platform's master secret: the proxy, the one
 * component that talks to the internet for sandboxes, holds nothing that opens anything else.
 */
export class EgressCredentials {
  private readonly key: Buffer;

  /** `key`: `SANDBOX_EGRESS_CREDENTIAL_KEY` (base64), or egressCredentialKeyFrom(AGENTPLANE_SECRET_KEY). */
  constructor(key: string) {
    const bytes = Buffer.from(key, "base64");
    if (bytes.length < EGRESS_CREDENTIAL_KEY_BYTES) throw new Error("the egress credential key is too short");
    this.key = bytes;
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
