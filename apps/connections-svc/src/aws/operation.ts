import { AWS_REGION_PATTERN, AWS_SERVICE_PATTERN } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { s3SubresourceOperation } from "./s3-subresources.ts";

/** What an AWS call is about, for the `aws:call` decision and for re-signing. */
export interface AwsCall {
  service: string;
  region: string;
  operation: string;
  bucket?: string;
  key?: string;
  /** Whether the caller is an AWS SDK or CLI (SigV4 `Authorization`), so errors can take its shape. */
  sdk: boolean;
}

/** Headers of the plain-HTTP form: `Authorization: Bearer …` plus these two. */
export const AWS_SERVICE_HEADER = "x-agentplane-aws-service";
export const AWS_REGION_HEADER = "x-agentplane-aws-region";

const SCOPE = /Credential=[^/,\s]+\/\d{8}\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request/;

/** `AWS4-HMAC-SHA256 Credential=agentplane/20260101/eu-west-1/s3/aws4_request, …` → region and service. */
export function credentialScope(authorization: string | null): { region: string; service: string } | undefined {
  const m = authorization ? SCOPE.exec(authorization) : null;
  return m ? { region: m[1]!, service: m[2]! } : undefined;
}

/** The S3 REST operation from method, path (`/bucket/key…`, path-style) and query. */
export function s3Operation(
  method: string,
  path: string,
  query: URLSearchParams,
  headers: Headers,
): { operation: string; bucket?: string; key?: string } {
  const trimmed = path.replace(/^\/+/, "");
  const slash = trimmed.indexOf("/");
  const bucket = decodeURIComponent(slash === -1 ? trimmed : trimmed.slice(0, slash)) || undefined;
  const key = slash === -1 ? undefined : decodeURIComponent(trimmed.slice(slash + 1)) || undefined;
  const m = method.toUpperCase();
  const where = { ...(bucket ? { bucket } : {}), ...(key ? { key } : {}) };
  if (!bucket) return { operation: m === "GET" ? "ListBuckets" : `${m}Service`, ...where };
  const sub = s3SubresourceOperation(m, key ? "object" : "bucket", query, headers);
  if (sub) return { operation: sub, ...where };
  if (!key) {
    if (m === "GET") return { operation: query.get("list-type") === "2" ? "ListObjectsV2" : "ListObjects", ...where };
    if (m === "PUT") return { operation: "CreateBucket", ...where };
    if (m === "DELETE") return { operation: "DeleteBucket", ...where };
    if (m === "HEAD") return { operation: "HeadBucket", ...where };
  } else {
    if (m === "GET") return { operation: "GetObject", ...where };
    if (m === "HEAD") return { operation: "HeadObject", ...where };
    if (m === "DELETE") return { operation: "DeleteObject", ...where };
    if (m === "PUT") return { operation: headers.has("x-amz-copy-source") ? "CopyObject" : "PutObject", ...where };
  }
  return { operation: `${m}Object`, ...where };
}

/**
 * Parses an AWS call: service and region from the SigV4 credential scope (SDKs, CLI) or the
 * plain-HTTP headers; the operation from `X-Amz-Target` (JSON protocols), the query or form
 * `Action` (query protocols such as STS, SQS), or the S3 REST method and path. 400 when the
 * service cannot be determined.
 */
export function parseAwsCall(args: {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: Uint8Array | undefined;
  defaultRegion: string;
}): AwsCall {
  // Behind the gateway the caller's SigV4 header arrives as x-agentplane-aws-authorization.
  const scope = credentialScope(
    args.headers.get("x-agentplane-aws-authorization") ?? args.headers.get("authorization"),
  );
  const service = scope?.service ?? args.headers.get(AWS_SERVICE_HEADER)?.toLowerCase();
  if (!service) {
    throw new ProblemError("bad-request", {
      detail: `The AWS service is not named: sign with SigV4 or send ${AWS_SERVICE_HEADER}`,
      errors: [{ pointer: `/headers/${AWS_SERVICE_HEADER}`, message: "the AWS service could not be determined" }],
    });
  }
  // Both become labels of the upstream host name (and the signature's scope): nothing else passes.
  if (!AWS_SERVICE_PATTERN.test(service)) {
    throw malformed(scope ? "authorization" : AWS_SERVICE_HEADER, "service", "an AWS service name such as s3");
  }
  const region = scope?.region ?? args.headers.get(AWS_REGION_HEADER) ?? args.defaultRegion;
  if (!AWS_REGION_PATTERN.test(region)) {
    throw malformed(scope ? "authorization" : AWS_REGION_HEADER, "region", "an AWS region such as eu-west-1");
  }
  const base = { service, region, sdk: Boolean(scope) };
  const method = args.method.toUpperCase();
  // The operation is what the service reads: S3 its REST shape (an X-Amz-Target or `Action` it
  // ignores must not rename `DELETE /bucket`), JSON protocols X-Amz-Target on a POST to the root,
  // query protocols `Action` (at the root; SQS's older queue URLs too), any other its method and path.
  if (service === "s3") return { ...base, ...s3Operation(method, args.path, args.query, args.headers) };
  const target = args.headers.get("x-amz-target");
  const targeted = target && method === "POST" ? target.slice(target.lastIndexOf(".") + 1) : undefined;
  const action = actionOf(args);
  const acted = action && (args.path === "/" || service === "sqs") ? action : undefined;
  // A query protocol reads `Action` and ignores X-Amz-Target, a JSON protocol the reverse (SQS
  // speaks both): naming one operation in each, the call is no one operation policy can judge.
  if (targeted && acted && targeted !== acted) {
    throw new ProblemError("bad-request", {
      detail: `The call names ${targeted} in X-Amz-Target and ${acted} as its Action: it is no one operation`,
      errors: [{ pointer: "/headers/x-amz-target", message: "one operation, as X-Amz-Target or as Action" }],
    });
  }
  if (targeted && args.path === "/") return { ...base, operation: targeted };
  if (acted) return { ...base, operation: acted };
  return { ...base, operation: `${method} ${args.path}` };
}

/** The query protocol's `Action`, from the query and a form body; two different ones are refused. */
function actionOf(args: {
  query: URLSearchParams;
  headers: Headers;
  body: Uint8Array | undefined;
}): string | undefined {
  const actions = new Set(args.query.getAll("Action"));
  const type = args.headers.get("content-type") ?? "";
  if (args.body?.length && type.startsWith("application/x-www-form-urlencoded")) {
    for (const a of new URLSearchParams(new TextDecoder().decode(args.body)).getAll("Action")) actions.add(a);
  }
  if (actions.size > 1) {
    throw new ProblemError("bad-request", {
      detail: `The call names more than one Action (${[...actions].join(", ")}): it is no one operation`,
      errors: [{ pointer: "/query/Action", message: "one Action, in the query or the form body" }],
    });
  }
  return [...actions][0] || undefined;
}

function malformed(header: string, what: string, expected: string): ProblemError {
  const where = header === "authorization" ? "the SigV4 credential scope" : header;
  return new ProblemError("bad-request", {
    detail: `The AWS ${what} in ${where} is malformed: expected ${expected}`,
    errors: [{ pointer: `/headers/${header}`, message: `expected ${expected}` }],
  });
}

/**
 * The bucket and key an S3 copy (CopyObject, UploadPartCopy) reads: `x-amz-copy-source` is
 * `[/]bucket/key[?versionId=…]`, URL-encoded, or an access point ARN with `/object/key`.
 */
export function copySource(headers: Headers): { bucket: string; key?: string } | undefined {
  const raw = headers.get("x-amz-copy-source");
  if (!raw) return undefined;
  let text: string;
  try {
    text = decodeURIComponent(raw.split("?")[0] ?? "");
  } catch {
    text = raw;
  }
  text = text.replace(/^\/+/, "");
  const arn = /^(arn:[^/]+\/[^/]+)\/object\/(.*)$/.exec(text);
  if (arn) return { bucket: arn[1] ?? "", ...(arn[2] ? { key: arn[2] } : {}) };
  const slash = text.indexOf("/");
  if (slash < 0) return { bucket: text };
  const key = text.slice(slash + 1);
  return { bucket: text.slice(0, slash), ...(key ? { key } : {}) };
}
