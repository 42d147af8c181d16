/**
 * S3 subresources (`?acl`, `?policy`, `?publicAccessBlock`…): the query key, not the method, says
 * what an S3 REST call does. `PUT /bucket?policy` replaces the bucket's policy and `PUT /bucket/key?acl`
 * an object's ACL; read as the plain call they would pass for CreateBucket and PutObject.
 */
type Method = "GET" | "PUT" | "DELETE" | "POST";
type ByMethod = Partial<Record<Method, string>>;

const VERB: Record<Method, string> = { GET: "Get", PUT: "Put", DELETE: "Delete", POST: "Post" };
const ops = (base: string, methods: Method[] = ["GET", "PUT", "DELETE"]): ByMethod =>
  Object.fromEntries(methods.map((m) => [m, `${VERB[m]}${base}`]));

const BUCKET: Record<string, ByMethod> = {
  acl: ops("BucketAcl", ["GET", "PUT"]),
  policy: ops("BucketPolicy"),
  policyStatus: ops("BucketPolicyStatus", ["GET"]),
  cors: ops("BucketCors"),
  lifecycle: {
    GET: "GetBucketLifecycleConfiguration",
    PUT: "PutBucketLifecycleConfiguration",
    DELETE: "DeleteBucketLifecycle",
  },
  versioning: ops("BucketVersioning", ["GET", "PUT"]),
  encryption: ops("BucketEncryption"),
  publicAccessBlock: ops("PublicAccessBlock"),
  tagging: ops("BucketTagging"),
  website: ops("BucketWebsite"),
  logging: ops("BucketLogging", ["GET", "PUT"]),
  notification: ops("BucketNotificationConfiguration", ["GET", "PUT"]),
  replication: ops("BucketReplication"),
  requestPayment: ops("BucketRequestPayment", ["GET", "PUT"]),
  ownershipControls: ops("BucketOwnershipControls"),
  accelerate: ops("BucketAccelerateConfiguration", ["GET", "PUT"]),
  "object-lock": ops("ObjectLockConfiguration", ["GET", "PUT"]),
  analytics: ops("BucketAnalyticsConfiguration"),
  inventory: ops("BucketInventoryConfiguration"),
  metrics: ops("BucketMetricsConfiguration"),
  "intelligent-tiering": ops("BucketIntelligentTieringConfiguration"),
  location: { GET: "GetBucketLocation" },
  versions: { GET: "ListObjectVersions" },
  uploads: { GET: "ListMultipartUploads" },
  delete: { POST: "DeleteObjects" },
};
/** Bucket configurations listed by a GET without `id`. */
const LISTED = new Set(["analytics", "inventory", "metrics", "intelligent-tiering"]);

const OBJECT: Record<string, ByMethod> = {
  acl: ops("ObjectAcl", ["GET", "PUT"]),
  tagging: ops("ObjectTagging"),
  retention: ops("ObjectRetention", ["GET", "PUT"]),
  "legal-hold": ops("ObjectLegalHold", ["GET", "PUT"]),
  restore: { POST: "RestoreObject" },
  attributes: { GET: "GetObjectAttributes" },
  torrent: { GET: "GetObjectTorrent" },
  select: { POST: "SelectObjectContent" },
  uploads: { POST: "CreateMultipartUpload" },
  uploadId: { GET: "ListParts", PUT: "UploadPart", POST: "CompleteMultipartUpload", DELETE: "AbortMultipartUpload" },
};

/**
 * The operation a subresource query names, or undefined when the query has none. A method the
 * subresource does not take, or several subresources at once, is no one S3 operation: it is named
 * `<METHOD> bucket?<keys>` (or `object?…`), which no policy takes for a plain call.
 */
export function s3SubresourceOperation(
  method: string,
  on: "bucket" | "object",
  query: URLSearchParams,
  headers: Headers,
): string | undefined {
  const table = on === "bucket" ? BUCKET : OBJECT;
  const present = [...new Set(query.keys())].filter((k) => Object.hasOwn(table, k)).sort();
  if (present.length === 0) return undefined;
  const unnamed = `${method} ${on}?${present.join("&")}`;
  if (present.length > 1) return unnamed;
  const sub = present[0] as string;
  if (on === "bucket" && method === "GET" && LISTED.has(sub) && !query.has("id")) {
    return `List${(table[sub]?.GET ?? "").slice("Get".length)}s`;
  }
  if (on === "object" && sub === "uploadId" && method === "PUT" && headers.has("x-amz-copy-source")) {
    return "UploadPartCopy";
  }
  return table[sub]?.[method as Method] ?? unnamed;
}
