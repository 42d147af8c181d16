import { createServer, type Server } from "node:http";
import {
  DeleteBucketCorsCommand,
  DeleteBucketEncryptionCommand,
  DeleteBucketLifecycleCommand,
  DeleteBucketPolicyCommand,
  DeleteBucketTaggingCommand,
  DeleteObjectTaggingCommand,
  DeletePublicAccessBlockCommand,
  GetBucketAclCommand,
  GetBucketPolicyCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutBucketAclCommand,
  PutBucketCorsCommand,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketPolicyCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutBucketWebsiteCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutPublicAccessBlockCommand,
  RestoreObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAwsCall } from "../src/aws/operation.ts";
import { resignRequest } from "../src/aws/resign.ts";
import { type AwsStandIn, startAwsStandIn, UPSTREAM_KEY } from "./fixtures/aws-stand-ins.ts";

/**
 * The AWS proxy's core with unchanged SDKs: endpoint = the proxy, access key `agentplane`, any
 * secret, session token = the caller's Agentplane token. The proxy drops the caller's signature,
 * reads service, region and operation, and re-signs for the upstream with the connection's keys;
 * the stand-ins check SigV4 as AWS does.
 */
describe("AWS re-signing with unchanged SDKs", () => {
  let upstream: AwsStandIn;
  let proxy: Server;
  let proxyUrl: string;
  const calls: {
    operation: string;
    service: string;
    region: string;
    bucket?: string;
    key?: string;
    token: string | undefined;
  }[] = [];

  beforeAll(async () => {
    upstream = await startAwsStandIn();
    proxy = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = Buffer.concat(chunks);
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
        const url = new URL(req.url ?? "/", "http://proxy");
        const path = url.pathname.replace(/^\/aws/, "") || "/";
        const call = parseAwsCall({
          method: req.method ?? "GET",
          path,
          query: url.searchParams,
          headers,
          body,
          defaultRegion: "us-east-1",
        });
        calls.push({ ...call, token: headers.get("x-amz-security-token") ?? undefined });
        const target = new URL(`${path}${url.search}`, upstream.url);
        const signed = await resignRequest({
          method: req.method ?? "GET",
          target,
          headers,
          body,
          service: call.service,
          region: call.region,
          credentials: UPSTREAM_KEY,
        });
        const answer = await fetch(target, {
          method: req.method ?? "GET",
          headers: signed,
          ...(body.length ? { body } : {}),
        });
        const out: Record<string, string> = {};
        answer.headers.forEach((v, k) => {
          if (k !== "transfer-encoding" && k !== "connection") out[k] = v;
        });
        res.writeHead(answer.status, out);
        res.end(Buffer.from(await answer.arrayBuffer()));
      })().catch((err) => {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: String(err) }));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/aws`;
  });
  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise((r) => proxy?.close(r));
    await upstream?.close();
  });

  const sdkCredentials = {
    accessKeyId: "agentplane",
    secretAccessKey: "anything",
    sessionToken: "apl_tok_caller_token",
  };

  it("the stand-ins refuse a wrong signature and accept the SDK's own (the check is real)", async () => {
    const direct = new S3Client({
      endpoint: upstream.url,
      region: "eu-west-1",
      forcePathStyle: true,
      credentials: UPSTREAM_KEY,
    });
    await direct.send(new PutObjectCommand({ Bucket: "b", Key: "direct.txt", Body: "x" }));
    const wrong = new S3Client({
      endpoint: upstream.url,
      region: "eu-west-1",
      forcePathStyle: true,
      credentials: { accessKeyId: UPSTREAM_KEY.accessKeyId, secretAccessKey: "not-the-secret" },
    });
    await expect(wrong.send(new PutObjectCommand({ Bucket: "b", Key: "x.txt", Body: "x" }))).rejects.toThrow();
    expect(upstream.requests.map((r) => r.failure)).toEqual([undefined, "signature mismatch"]);
  });

  it("@aws-sdk/client-s3 puts, lists and gets through the proxy; operations and bucket/key parsed", async () => {
    const s3 = new S3Client({
      endpoint: proxyUrl,
      region: "eu-west-1",
      forcePathStyle: true,
      credentials: sdkCredentials,
    });
    await s3.send(new PutObjectCommand({ Bucket: "reports", Key: "2026/q4.csv", Body: "a,b\n1,2\n" }));
    const list = await s3.send(new ListObjectsV2Command({ Bucket: "reports" }));
    expect(list.Contents?.map((c) => c.Key)).toEqual(["2026/q4.csv"]);
    const got = await s3.send(new GetObjectCommand({ Bucket: "reports", Key: "2026/q4.csv" }));
    expect(await got.Body?.transformToString()).toBe("a,b\n1,2\n");
    expect(calls.map((c) => [c.service, c.region, c.operation, c.bucket, c.key])).toEqual([
      ["s3", "eu-west-1", "PutObject", "reports", "2026/q4.csv"],
      ["s3", "eu-west-1", "ListObjectsV2", "reports", undefined],
      ["s3", "eu-west-1", "GetObject", "reports", "2026/q4.csv"],
    ]);
    expect(calls.every((c) => c.token === "apl_tok_caller_token")).toBe(true);
    const viaProxy = upstream.requests.slice(-3);
    expect(viaProxy.every((r) => r.failure === undefined && r.accessKeyId === UPSTREAM_KEY.accessKeyId)).toBe(true);
  });

  it("S3 subresource calls are named for what S3 does, not as the plain object or bucket call", async () => {
    const s3 = new S3Client({
      endpoint: proxyUrl,
      region: "eu-west-1",
      forcePathStyle: true,
      credentials: sdkCredentials,
    });
    const Bucket = "reports";
    const Key = "2026/q4.csv";
    const commands: [string, { input: unknown }][] = [
      ["PutBucketPolicy", new PutBucketPolicyCommand({ Bucket, Policy: "{}" })],
      ["GetBucketPolicy", new GetBucketPolicyCommand({ Bucket })],
      ["DeleteBucketPolicy", new DeleteBucketPolicyCommand({ Bucket })],
      ["PutBucketAcl", new PutBucketAclCommand({ Bucket, ACL: "public-read" })],
      ["GetBucketAcl", new GetBucketAclCommand({ Bucket })],
      ["PutObjectAcl", new PutObjectAclCommand({ Bucket, Key, ACL: "public-read" })],
      ["GetObjectAcl", new GetObjectAclCommand({ Bucket, Key })],
      ["PutPublicAccessBlock", new PutPublicAccessBlockCommand({ Bucket, PublicAccessBlockConfiguration: {} })],
      ["DeletePublicAccessBlock", new DeletePublicAccessBlockCommand({ Bucket })],
      ["PutBucketCors", new PutBucketCorsCommand({ Bucket, CORSConfiguration: { CORSRules: [] } })],
      ["DeleteBucketCors", new DeleteBucketCorsCommand({ Bucket })],
      ["PutBucketVersioning", new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: {} })],
      ["PutBucketLifecycleConfiguration", new PutBucketLifecycleConfigurationCommand({ Bucket })],
      ["DeleteBucketLifecycle", new DeleteBucketLifecycleCommand({ Bucket })],
      [
        "PutBucketEncryption",
        new PutBucketEncryptionCommand({ Bucket, ServerSideEncryptionConfiguration: { Rules: [] } }),
      ],
      ["DeleteBucketEncryption", new DeleteBucketEncryptionCommand({ Bucket })],
      ["PutBucketTagging", new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: [] } })],
      ["DeleteBucketTagging", new DeleteBucketTaggingCommand({ Bucket })],
      ["DeleteObjectTagging", new DeleteObjectTaggingCommand({ Bucket, Key })],
      ["PutBucketWebsite", new PutBucketWebsiteCommand({ Bucket, WebsiteConfiguration: {} })],
      [
        "PutBucketOwnershipControls",
        new PutBucketOwnershipControlsCommand({ Bucket, OwnershipControls: { Rules: [] } }),
      ],
      ["RestoreObject", new RestoreObjectCommand({ Bucket, Key })],
    ];
    const seen: [string, string | undefined][] = [];
    for (const [, command] of commands) {
      const before = calls.length;
      await s3.send(command as never).catch(() => undefined);
      seen.push([calls.at(before)?.operation ?? "(not sent)", calls.at(before)?.bucket]);
    }
    expect(seen).toEqual(commands.map(([name]) => [name, Bucket]));
  });

  it("@aws-sdk/client-sts GetCallerIdentity: the query-protocol Action is the operation", async () => {
    const sts = new STSClient({ endpoint: proxyUrl, region: "us-east-2", credentials: sdkCredentials });
    const me = await sts.send(new GetCallerIdentityCommand({}));
    expect(me.Account).toBe("123456789012");
    expect(calls.at(-1)).toMatchObject({ service: "sts", region: "us-east-2", operation: "GetCallerIdentity" });
  });

  it("JSON protocols take the operation from X-Amz-Target; no service at all is a 400", () => {
    const headers = new Headers({
      "x-amz-target": "DynamoDB_20120810.GetItem",
      authorization:
        "AWS4-HMAC-SHA256 Credential=agentplane/20260101/eu-central-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00",
    });
    expect(
      parseAwsCall({
        method: "POST",
        path: "/",
        query: new URLSearchParams(),
        headers,
        body: undefined,
        defaultRegion: "us-east-1",
      }),
    ).toMatchObject({ service: "dynamodb", region: "eu-central-1", operation: "GetItem", sdk: true });
    expect(() =>
      parseAwsCall({
        method: "GET",
        path: "/",
        query: new URLSearchParams(),
        headers: new Headers(),
        body: undefined,
        defaultRegion: "us-east-1",
      }),
    ).toThrow(/service is not named/);
    expect(
      parseAwsCall({
        method: "GET",
        path: "/",
        query: new URLSearchParams("Action=ListQueues"),
        headers: new Headers({ "x-agentplane-aws-service": "sqs" }),
        body: undefined,
        defaultRegion: "ap-south-1",
      }),
    ).toMatchObject({ service: "sqs", region: "ap-south-1", operation: "ListQueues", sdk: false });
  });

  it("names a call by what the service reads, never by a target or Action it ignores", () => {
    const call = (
      service: string,
      method: string,
      path: string,
      init: { query?: string; target?: string; body?: string } = {},
    ) =>
      parseAwsCall({
        method,
        path,
        query: new URLSearchParams(init.query ?? ""),
        headers: new Headers({
          "x-agentplane-aws-service": service,
          ...(init.target ? { "x-amz-target": init.target } : {}),
          ...(init.body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        }),
        body: init.body ? new TextEncoder().encode(init.body) : undefined,
        defaultRegion: "eu-west-1",
      }).operation;
    // S3 answers by its REST shape: a header or query it ignores does not rename a bucket's deletion.
    expect(call("s3", "DELETE", "/reports", { target: "AmazonS3.GetObject" })).toBe("DeleteBucket");
    expect(call("s3", "DELETE", "/reports", { query: "Action=ListBuckets" })).toBe("DeleteBucket");
    expect(call("s3", "PUT", "/reports/k", { query: "acl&Action=GetObject" })).toBe("PutObjectAcl");
    // A REST service's call is its method and path, whatever X-Amz-Target it carries.
    expect(call("lambda", "DELETE", "/2015-03-31/functions/f", { target: "AWSLambda.GetFunction" })).toBe(
      "DELETE /2015-03-31/functions/f",
    );
    // JSON and query protocols still name theirs.
    expect(call("dynamodb", "POST", "/", { target: "DynamoDB_20120810.GetItem" })).toBe("GetItem");
    expect(call("iam", "POST", "/", { body: "Action=ListUsers&Version=2010-05-08" })).toBe("ListUsers");
    // Two different Actions (query and form) are no one operation.
    expect(() => call("iam", "POST", "/", { query: "Action=ListUsers", body: "Action=DeleteUser" })).toThrow(/Action/);
    expect(() => call("iam", "POST", "/", { query: "Action=ListUsers&Action=DeleteUser" })).toThrow(/Action/);
    // A query-protocol service reads Action and ignores X-Amz-Target, a JSON one the reverse: a call
    // naming one operation in each is no one operation either (policy would judge the other).
    expect(() =>
      call("iam", "POST", "/", { target: "AWSIdentityManagementV20100508.ListUsers", body: "Action=DeleteUser" }),
    ).toThrow(/Action/);
    expect(() =>
      call("dynamodb", "POST", "/", { target: "DynamoDB_20120810.GetItem", query: "Action=DeleteTable" }),
    ).toThrow(/Action/);
    // Both naming the same operation is that operation.
    expect(call("sqs", "POST", "/", { target: "AmazonSQS.ListQueues", body: "Action=ListQueues" })).toBe("ListQueues");
  });
});
