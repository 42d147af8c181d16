import { requirePostgres } from "@agentplane/testkit";
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { governanceStandIn } from "../../platform/test/connections-governance-stand-in.ts";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";
import { type AwsStandIn, startAwsStandIn, UPSTREAM_KEY } from "./fixtures/aws-stand-ins.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`AWS connections through the platform${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let upstream: AwsStandIn;
  let connectionId: string;
  let governance: ReturnType<typeof governanceStandIn>;

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    upstream = await startAwsStandIn();
    governance = governanceStandIn(
      h.platform.keys,
      [
        {
          ruleId: "no-deletes-in-audit-bucket",
          matches: (r) =>
            r.action === "aws:call" &&
            (r.context as { operation?: string }).operation === "PutObject" &&
            (r.context as { bucket?: string }).bucket === "locked",
        },
      ],
      { cred_aws: { kind: "aws-keys", fields: { ...UPSTREAM_KEY } } },
    );
    h.connections.context.governance = governance.client;
  });
  afterAll(async () => {
    await upstream?.close();
    await h?.close();
  });

  it("creates, lists, reads and tests a connection (STS GetCallerIdentity)", async () => {
    const created = await h.call<{ id: string; credentialId: string }>(
      "POST",
      `/v1/projects/${h.projectId}/aws-connections`,
      {
        token: h.adminToken,
        body: {
          name: "prod account",
          credentialId: "cred_aws",
          defaultRegion: "eu-west-1",
          endpoints: { s3: upstream.url, sts: upstream.url },
        },
      },
    );
    expect(created.status).toBe(201);
    connectionId = created.body.id;
    expect(connectionId).toMatch(/^awc_/);
    const list = await h.call<{ items: { id: string }[] }>("GET", `/v1/projects/${h.projectId}/aws-connections`, {
      token: h.viewerToken,
    });
    expect(list.body.items.map((i) => i.id)).toEqual([connectionId]);
    const tested = await h.call("POST", `/v1/aws-connections/${connectionId}/test`, { token: h.adminToken });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ account: "123456789012", arn: "arn:aws:iam::123456789012:user/agentplane" });
    const bad = await h.call("POST", `/v1/projects/${h.projectId}/aws-connections`, {
      token: h.adminToken,
      body: { name: "x", credentialId: "c", defaultRegion: "nowhere" },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("defaultRegion");
  });

  it("unchanged SDKs: access key agentplane, the Agentplane token as session token; re-signed upstream", async () => {
    const endpoint = `${h.url}/v1/aws-connections/${connectionId}/aws`;
    const credentials = { accessKeyId: "agentplane", secretAccessKey: "unused", sessionToken: h.memberToken };
    const s3 = new S3Client({ endpoint, region: "eu-west-1", forcePathStyle: true, credentials });
    await s3.send(new PutObjectCommand({ Bucket: "reports", Key: "q4.csv", Body: "a,b\n" }));
    const got = await s3.send(new GetObjectCommand({ Bucket: "reports", Key: "q4.csv" }));
    expect(await got.Body?.transformToString()).toBe("a,b\n");
    const sts = new STSClient({ endpoint, region: "eu-west-1", credentials });
    expect((await sts.send(new GetCallerIdentityCommand({}))).Account).toBe("123456789012");
    const viaProxy = upstream.requests.slice(-3);
    expect(viaProxy.every((r) => r.failure === undefined && r.accessKeyId === UPSTREAM_KEY.accessKeyId)).toBe(true);
    const decided = governance.seen.filter((r) => r.action === "aws:call").map((r) => r.context);
    expect(decided).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          service: "s3",
          operation: "PutObject",
          bucket: "reports",
          key: "q4.csv",
          region: "eu-west-1",
        }),
        expect.objectContaining({ service: "sts", operation: "GetCallerIdentity" }),
      ]),
    );
  });

  it("bearer form with service and region headers; policy deny is a 403 naming the rule; no service is a 400", async () => {
    const denied = await h.call("PUT", `/v1/aws-connections/${connectionId}/aws/locked/x.txt`, {
      token: h.memberToken,
      headers: { "x-agentplane-aws-service": "s3", "x-agentplane-aws-region": "eu-west-1" },
      body: "x",
    });
    expect(denied.status).toBe(403);
    expect(denied.body.ruleId).toBe("no-deletes-in-audit-bucket");
    const ok = await fetch(`${h.url}/v1/aws-connections/${connectionId}/aws/reports/q4.csv`, {
      headers: { authorization: `Bearer ${h.memberToken}`, "x-agentplane-aws-service": "s3" },
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("a,b\n");
    const none = await h.call("GET", `/v1/aws-connections/${connectionId}/aws/reports/q4.csv`, {
      token: h.memberToken,
    });
    expect(none.status).toBe(400);
  });

  it("security: no token 401, another organization 404, a viewer may not call or manage", async () => {
    const path = `/v1/aws-connections/${connectionId}/aws/reports/q4.csv`;
    const s3h = { "x-agentplane-aws-service": "s3" };
    expect((await h.call("GET", path, { token: null, headers: s3h })).status).toBe(401);
    expect((await h.call("GET", path, { token: h.otherToken, headers: s3h })).status).toBe(404);
    expect((await h.call("GET", path, { token: h.viewerToken, headers: s3h })).status).toBe(403);
    expect((await h.call("GET", `/v1/aws-connections/${connectionId}`, { token: h.otherToken })).status).toBe(404);
    expect((await h.call("GET", `/v1/aws-connections/${connectionId}`, { token: null })).status).toBe(401);
    expect(
      (await h.call("PATCH", `/v1/aws-connections/${connectionId}`, { token: h.viewerToken, body: { name: "y" } }))
        .status,
    ).toBe(403);
    expect((await h.call("POST", `/v1/aws-connections/${connectionId}/test`, { token: h.memberToken })).status).toBe(
      403,
    );
    expect((await h.call("DELETE", `/v1/aws-connections/${connectionId}`, { token: h.otherToken })).status).toBe(404);
    expect((await h.call("DELETE", `/v1/aws-connections/${connectionId}`, { token: h.adminToken })).status).toBe(204);
  });
});
