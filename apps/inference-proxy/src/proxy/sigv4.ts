import { Sha256 } from "@aws-crypto/sha256-js";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import type { UpstreamAuth } from "./target.ts";

const signers = new Map<string, SignatureV4>();

/**
 * Signs the request exactly as it will be sent (method, path as forwarded, query, headers and the
 * body bytes) for the Bedrock runtime (service `bedrock`). Session tokens are supported.
 */
export async function signSigV4(
  auth: Extract<UpstreamAuth, { kind: "sigv4" }>,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: Uint8Array | undefined,
): Promise<Record<string, string>> {
  const c = auth.credential;
  const key = `${c.accessKeyId}\u0000${auth.region}\u0000${c.sessionToken ?? ""}`;
  let signer = signers.get(key);
  if (!signer) {
    signer = new SignatureV4({
      service: "bedrock",
      region: auth.region,
      sha256: Sha256,
      credentials: {
        accessKeyId: c.accessKeyId,
        secretAccessKey: c.secretAccessKey,
        ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}),
      },
    });
    if (signers.size > 100) signers.clear();
    signers.set(key, signer);
  }
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const request = new HttpRequest({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query,
    headers: { ...headers, host: url.host },
    ...(body ? { body } : {}),
  });
  const signed = await signer.sign(request);
  return signed.headers as Record<string, string>;
}
