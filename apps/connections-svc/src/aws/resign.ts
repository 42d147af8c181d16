import { Sha256 } from "@aws-crypto/sha256-js";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

/** Headers that belong to the caller's signature or hop (never forwarded upstream). */
const CALLER_HEADERS = new Set([
  "authorization",
  "x-amz-date",
  "x-amz-security-token",
  "x-amz-content-sha256",
  "x-amz-user-agent",
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "expect",
  "accept-encoding",
]);

/**
 * Removes whatever signature the caller sent and signs the request for `target` with the
 * connection's credentials (SigV4, the body's SHA-256 as payload hash).
 */
export async function resignRequest(args: {
  method: string;
  target: URL;
  headers: Headers;
  body: Uint8Array | undefined;
  service: string;
  region: string;
  credentials: AwsCredentials;
}): Promise<Headers> {
  const headers: Record<string, string> = {};
  args.headers.forEach((value, key) => {
    if (!CALLER_HEADERS.has(key) && !key.startsWith("x-agentplane-") && !key.startsWith("x-forwarded-")) {
      headers[key] = value;
    }
  });
  headers.host = args.target.host;
  if (args.body?.length) headers["content-length"] = String(args.body.length);
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of args.target.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const request = new HttpRequest({
    method: args.method,
    protocol: args.target.protocol,
    hostname: args.target.hostname,
    ...(args.target.port ? { port: Number(args.target.port) } : {}),
    path: args.target.pathname,
    query,
    headers,
    ...(args.body?.length ? { body: args.body } : {}),
  });
  const signer = new SignatureV4({
    credentials: args.credentials,
    region: args.region,
    service: args.service,
    sha256: Sha256,
    // S3 signs paths as sent; other services normalize them.
    uriEscapePath: args.service !== "s3",
    applyChecksum: args.service === "s3",
  });
  const signed = await signer.sign(request);
  const out = new Headers();
  for (const [k, v] of Object.entries(signed.headers)) out.set(k, v);
  return out;
}
