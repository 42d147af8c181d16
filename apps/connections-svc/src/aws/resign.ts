import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import { CSRF_HEADER } from "@agentplane/contracts";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytesOf(data: SourceData): Buffer {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/**
 * SHA-256 and HMAC-SHA-256 for SigV4 from node:crypto (OpenSSL), the way `@smithy/hash-node`
 * does it, instead of the pure JavaScript `@aws-crypto/sha256-js`: a signature takes six of them.
 */
class NodeSha256 {
  private readonly secret: SourceData | undefined;
  private hash: Hash | Hmac;

  constructor(secret?: SourceData) {
    this.secret = secret;
    this.hash = this.fresh();
  }

  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash("sha256") : createHmac("sha256", bytesOf(this.secret));
  }

  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }

  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }

  reset(): void {
    this.hash = this.fresh();
  }
}

/**
 * Headers that belong to the caller's signature, hop or credentials for the platform (never
 * forwarded upstream): an endpoint override may be any server, and AWS reads none of them.
 */
const CALLER_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  CSRF_HEADER,
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
    sha256: NodeSha256,
    // S3 signs paths as sent; other services normalize them.
    uriEscapePath: args.service !== "s3",
    applyChecksum: args.service === "s3",
  });
  const signed = await signer.sign(request);
  const out = new Headers();
  for (const [k, v] of Object.entries(signed.headers)) out.set(k, v);
  return out;
}
