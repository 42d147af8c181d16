import { requirePostgres } from "@agentplane/testkit";
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type ConnectionsPlatform,
  startConnectionsPlatform,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { type AwsStandIn, startAwsStandIn, UPSTREAM_KEY } from "./fixtures/aws-stand-ins.ts";
import { bindProjectPolicy, createProjectCredential } from "./fixtures/governance-policy.ts";

const pg = await requirePostgres();

/** Everything is allowed but writing to the `locked` bucket (a real Cedar policy, enforced by governance). */
const AWS_POLICY = `
@id("allow-everything-else")
permit(principal, action, resource);

@id("no-writes-to-locked-bucket")
forbid(principal, action == Action::"aws:call", resource)
when { context.operation == "PutObject" && context has bucket && context.bucket == "locked" };

@id("no-reads-of-vault-bucket")
forbid(principal, action == Action::"aws:call", resource)
when { context.operation == "GetObject" && context has bucket && context.bucket == "vault" };
`;

const LONG_ROLE = "arn:aws:iam::123456789012:role/agentplane-long";
const SHORT_ROLE = "arn:aws:iam::123456789012:role/agentplane-short";
const BRIEF_ROLE = "arn:aws:iam::123456789012:role/agentplane-brief";

describe.skipIf(!pg.available)(`AWS connections through the platform${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let upstream: AwsStandIn;
  let connectionId: string;
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    upstream = await startAwsStandIn(undefined, {
      [LONG_ROLE]: { externalId: "ext-long", durationSeconds: 3600 },
      // Inside the refresh margin after 2 s: reused at first, then assumed afresh.
      [SHORT_ROLE]: { externalId: "ext-short", durationSeconds: 302 },
      // Expires 2 s after it is issued: never reusable.
      [BRIEF_ROLE]: { externalId: "ext-brief", durationSeconds: 2 },
    });
    // governance-svc assumes roles with the platform's own AWS identity, found the SDK's way.
    process.env.AWS_ENDPOINT_URL_STS = upstream.url;
    process.env.AWS_ACCESS_KEY_ID = UPSTREAM_KEY.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = UPSTREAM_KEY.secretAccessKey;
    process.env.AWS_REGION = "us-east-1";
    // The stand-in listens on loopback, which the outbound address policy refuses unless allowed.
    h = await startConnectionsPlatform({ env: { CONNECTOR_ALLOWED_HOSTS: `127.0.0.1:${new URL(upstream.url).port}` } });
    await bindProjectPolicy(h, "aws-calls", AWS_POLICY);
  });
  afterAll(async () => {
    process.env = savedEnv;
    await upstream?.close();
    await h?.close();
  });

  const createConnection = async (name: string, credentialId: string): Promise<string> => {
    const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/aws-connections`, {
      token: h.adminToken,
      body: { name, credentialId, defaultRegion: "eu-west-1", endpoints: { s3: upstream.url, sts: upstream.url } },
    });
    expect(created.status).toBe(201);
    return created.body.id;
  };

  it("creates, lists, reads and tests a connection (STS GetCallerIdentity)", async () => {
    const credentialId = await createProjectCredential(h, { name: "prod-keys", kind: "aws-keys", ...UPSTREAM_KEY });
    connectionId = await createConnection("prod account", credentialId);
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

  it("takes only an AWS credential of its own project: another organization's, or another kind, is a 400", async () => {
    const theirs = await h.call<{ id: string }>("POST", `/v1/projects/${h.otherProjectId}/credentials`, {
      token: h.otherToken,
      body: { name: "their-keys", kind: "aws-keys", ...UPSTREAM_KEY },
    });
    expect(theirs.status).toBe(201);
    const bearer = await createProjectCredential(h, { name: "not-aws", kind: "http-bearer", token: "t0ken-value" });
    for (const credentialId of [theirs.body.id, bearer, "cred_nonexistent"]) {
      const created = await h.call<{ errors?: { pointer: string }[] }>(
        "POST",
        `/v1/projects/${h.projectId}/aws-connections`,
        { token: h.adminToken, body: { name: `borrowed ${credentialId}`, credentialId, defaultRegion: "eu-west-1" } },
      );
      expect(created.status, credentialId).toBe(400);
      expect(created.body.errors?.[0]?.pointer).toBe("/body/credentialId");
      const patched = await h.call("PATCH", `/v1/aws-connections/${connectionId}`, {
        token: h.adminToken,
        body: { credentialId },
      });
      expect(patched.status, credentialId).toBe(400);
    }
    const listed = await h.call<{ items: { name: string }[] }>("GET", `/v1/projects/${h.projectId}/aws-connections`, {
      token: h.adminToken,
    });
    expect(listed.body.items.map((i) => i.name)).toEqual(["prod account"]);
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
  });

  it("bearer form with service and region headers; the Cedar forbid is a 403 naming the rule, audited; no service is a 400", async () => {
    const before = upstream.requests.length;
    const denied = await h.call("PUT", `/v1/aws-connections/${connectionId}/aws/locked/x.txt`, {
      token: h.memberToken,
      headers: { "x-agentplane-aws-service": "s3", "x-agentplane-aws-region": "eu-west-1" },
      body: "x",
    });
    expect(denied.status).toBe(403);
    expect(String(denied.body.type)).toMatch(/policy-denied$/);
    expect(denied.body.ruleId).toBe("no-writes-to-locked-bucket");
    expect(upstream.requests.length).toBe(before);
    // Reading the locked bucket and writing elsewhere stay allowed.
    const other = await h.call("PUT", `/v1/aws-connections/${connectionId}/aws/open/x.txt`, {
      token: h.memberToken,
      headers: { "x-agentplane-aws-service": "s3", "x-agentplane-aws-region": "eu-west-1" },
      body: "x",
    });
    expect(other.status).toBe(200);
    const records = await waitFor(
      async () => {
        const r = await h.call<{ items: { action: string; outcome: string; details?: Record<string, unknown> }[] }>(
          "GET",
          `/v1/orgs/${h.orgId}/audit-trail?action=aws:call`,
          { token: h.ownerToken },
        );
        return r.body.items?.some((i) => i.outcome === "denied") ? r.body.items : undefined;
      },
      15_000,
      "the audit record of the denial",
    );
    expect(records.find((i) => i.outcome === "denied")?.details).toMatchObject({
      operation: "PutObject",
      bucket: "locked",
    });
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

  it("a copy is judged as a read of its source too: a forbid on reading a bucket holds for copies out of it", async () => {
    const before = upstream.requests.length;
    for (const source of ["/vault/secret.txt", "vault/secret.txt?versionId=3", "%2Fvault%2Fsecret.txt"]) {
      const copied = await h.call("PUT", `/v1/aws-connections/${connectionId}/aws/open/copy.txt`, {
        token: h.memberToken,
        headers: {
          "x-agentplane-aws-service": "s3",
          "x-agentplane-aws-region": "eu-west-1",
          "x-amz-copy-source": source,
        },
      });
      expect(copied.status, source).toBe(403);
      expect(copied.body.ruleId).toBe("no-reads-of-vault-bucket");
    }
    expect(upstream.requests.length).toBe(before);
  });

  it("aws-role: governance assumes the role through STS with its external id; the session is reused, then refreshed before expiry", async () => {
    const roleCred = await createProjectCredential(h, {
      name: "short-role",
      kind: "aws-role",
      roleArn: SHORT_ROLE,
      externalId: "ext-short",
    });
    const conn = await createConnection("role account", roleCred);
    const tested = await h.call("POST", `/v1/aws-connections/${conn}/test`, { token: h.adminToken });
    expect(tested.status).toBe(200);
    expect(tested.body.arn).toBe("arn:aws:sts::123456789012:assumed-role/agentplane-short");
    const s3 = { "x-agentplane-aws-service": "s3", "x-agentplane-aws-region": "eu-west-1" };
    const put = (key: string) =>
      h.call("PUT", `/v1/aws-connections/${conn}/aws/roles/${key}`, { token: h.memberToken, headers: s3, body: key });
    expect((await put("a")).status).toBe(200);
    expect((await put("b")).status).toBe(200);
    const first = upstream.assumed.filter((a) => a.roleArn === SHORT_ROLE);
    // One AssumeRole, with the external id, signed by the platform's key; both calls used its session.
    expect(first).toHaveLength(1);
    expect(first[0]!.externalId).toBe("ext-short");
    const used = upstream.requests.filter((r) => r.path.startsWith("/roles/"));
    expect(used.map((r) => [r.accessKeyId, r.failure])).toEqual([
      [first[0]!.accessKeyId, undefined],
      [first[0]!.accessKeyId, undefined],
    ]);
    // Within five minutes of its expiry (2 s after it was issued) the session is replaced, not used:
    // calls keep succeeding with it until then, and the first one past that point assumes a new one.
    await vi.waitFor(
      async () => {
        expect((await put("c")).status).toBe(200);
        expect(upstream.assumed.filter((a) => a.roleArn === SHORT_ROLE)).toHaveLength(2);
      },
      { timeout: 15_000, interval: 200 },
    );
    const after = upstream.assumed.filter((a) => a.roleArn === SHORT_ROLE);
    expect(upstream.requests.at(-1)).toMatchObject({ accessKeyId: after[1]!.accessKeyId, failure: undefined });
  });

  it("aws-role: an expired session is never used; a wrong external id is refused by STS and nothing reaches S3", async () => {
    const brief = await createConnection(
      "brief account",
      await createProjectCredential(h, {
        name: "brief-role",
        kind: "aws-role",
        roleArn: BRIEF_ROLE,
        externalId: "ext-brief",
      }),
    );
    const s3 = { "x-agentplane-aws-service": "s3", "x-agentplane-aws-region": "eu-west-1" };
    const put = (conn: string, key: string) =>
      h.call("PUT", `/v1/aws-connections/${conn}/aws/brief/${key}`, { token: h.memberToken, headers: s3, body: key });
    expect((await put(brief, "1")).status).toBe(200);
    // On a clock moved past the first session's expiry (the stand-in answers ExpiredToken to it), not
    // by waiting: a new session is assumed and used.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 2500);
      expect((await put(brief, "2")).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
    const sessions = upstream.assumed.filter((a) => a.roleArn === BRIEF_ROLE).map((a) => a.accessKeyId);
    expect(sessions).toHaveLength(2);
    const writes = upstream.requests.filter((r) => r.path.startsWith("/brief/"));
    expect(writes.map((r) => [r.accessKeyId, r.failure])).toEqual([
      [sessions[0], undefined],
      [sessions[1], undefined],
    ]);

    const wrong = await createConnection(
      "wrong external id",
      await createProjectCredential(h, {
        name: "wrong-ext",
        kind: "aws-role",
        roleArn: LONG_ROLE,
        externalId: "guess",
      }),
    );
    const before = upstream.requests.filter((r) => r.path.startsWith("/brief/")).length;
    const refused = await put(wrong, "3");
    expect(refused.status).toBe(502);
    expect((refused.body as { detail?: string }).detail).toContain("AccessDenied");
    expect(upstream.assumed.some((a) => a.externalId === "guess")).toBe(false);
    expect(upstream.requests.filter((r) => r.path.startsWith("/brief/")).length).toBe(before);
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
