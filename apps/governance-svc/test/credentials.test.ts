import { randomBytes } from "node:crypto";
import { internalResolveCredentialRoute, type Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { readBody, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rewrapCredentials } from "../src/services/credentials.ts";
import { captureLogger } from "./fixtures/capture-logger.ts";
import { type Harness, json, secondOrg, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

// Distinctive values: any of them showing up in a response, log line or audit record is a leak.
// Response bodies are read loosely here; the route tests of each shape live with the contracts.
// biome-ignore lint/suspicious/noExplicitAny: see above
type Loose = Record<string, any>;

const SECRETS = {
  bearer: `tok-${randomBytes(12).toString("hex")}`,
  awsSecret: `aws-${randomBytes(16).toString("hex")}`,
  rotated: `rot-${randomBytes(12).toString("hex")}`,
  external: `ext-${randomBytes(8).toString("hex")}`,
  password: `pw-${randomBytes(10).toString("hex")}`,
};

describe.skipIf(!target.available)(`credentials on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let opened: Awaited<ReturnType<typeof target.open>>;
  let projectId: string;
  let developer: Principal;
  const logs = captureLogger();
  const bodies: string[] = [];
  const K1 = randomBytes(32);
  const K2 = randomBytes(32);
  const stsCalls: string[] = [];
  let sts: Awaited<ReturnType<typeof startLocalServer>>;

  beforeAll(async () => {
    sts = await startLocalServer(async (req, res) => {
      stsCalls.push(await readBody(req));
      res.setHeader("content-type", "text/xml");
      res.end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
<Credentials><AccessKeyId>ASIATESTSESSION1</AccessKeyId><SecretAccessKey>session-secret</SecretAccessKey>
<SessionToken>session-token</SessionToken><Expiration>${new Date(Date.now() + 3600_000).toISOString()}</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/agents/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>
</AssumeRoleResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></AssumeRoleResponse>`);
    });
    opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database, {
      logger: logs,
      config: {
        secretKey: K1,
        sts: {
          endpoint: sts.url,
          region: "us-east-1",
          credentials: { accessKeyId: "AKIDPLATFORM", secretAccessKey: "platform" },
        },
      },
    });
    projectId = await h.project("creds");
    developer = await h.member("dev@a.test", "member");
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
    await sts?.close();
  });

  const call = async (method: string, path: string, body?: unknown, as: Principal = h.owner) => {
    const res = await h.call(method, path, { as, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    bodies.push(text);
    return { status: res.status, body: text ? (JSON.parse(text) as Loose) : {} };
  };
  const base = () => `/v1/projects/${projectId}/credentials`;
  const resolve = async (credentialId: string, extra: Record<string, unknown> = {}, inProject = projectId) => {
    const res = await h.internal(internalResolveCredentialRoute.path, {
      credentialId,
      projectId: inProject,
      ...extra,
    });
    return { status: res.status, body: await json<Loose>(res) };
  };

  it("stores each kind encrypted and shows only metadata", async () => {
    const keys = await call("POST", base(), {
      name: "aws",
      kind: "aws-keys",
      accessKeyId: "AKIAEXAMPLE12345678",
      secretAccessKey: SECRETS.awsSecret,
      region: "eu-west-1",
    });
    expect(keys.status).toBe(201);
    expect(keys.body).toMatchObject({
      kind: "aws-keys",
      secretVersion: 1,
      useCount: 0,
      metadata: { accessKeyIdLast4: "5678", region: "eu-west-1" },
    });
    expect(keys.body.metadata.accessKeyId).toBeUndefined();
    const bearer = await call("POST", base(), { name: "bearer", kind: "http-bearer", token: SECRETS.bearer });
    expect(bearer.status).toBe(201);
    expect(
      (await call("POST", base(), { name: "basic", kind: "http-basic", username: "u", password: SECRETS.password }))
        .body.metadata,
    ).toEqual({ username: "u" });
    const row = await opened.database.kysely
      .selectFrom("governance.credentials")
      .select(["sealed", "wrapped_key", "metadata"])
      .where("id", "=", bearer.body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(SECRETS.bearer);
    const list = await call("GET", base());
    expect(list.body.items.map((c: { name: string }) => c.name)).toEqual(["aws", "bearer", "basic"]);
  });

  it("answers 400 naming the field for an unknown kind, a missing or an unknown field, 409 for a duplicate name", async () => {
    expect((await call("POST", base(), { name: "x", kind: "ftp-password", password: "p" })).status).toBe(400);
    const missing = await call("POST", base(), { name: "x", kind: "aws-keys", accessKeyId: "AKIA" });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].pointer).toBe("/body/secretAccessKey");
    const unknown = await call("POST", base(), { name: "x", kind: "http-bearer", token: "t", tokne: "t" });
    expect(unknown.body.errors[0].pointer).toBe("/body/tokne");
    expect((await call("POST", base(), { name: "bearer", kind: "http-bearer", token: "t" })).status).toBe(409);
    expect((await call("POST", base(), { name: "y", kind: "http-bearer", token: "t" }, developer)).status).toBe(403);
  });

  it("refuses a resource name that is not one DNS label and a region that is not a region (400 on the field)", async () => {
    const refused: Array<[Record<string, string>, string]> = [
      [{ kind: "cloud-b-key", resourceName: "127.0.0.1:8443/x?", key: "k" }, "/body/resourceName"],
      [{ kind: "cloud-b-key", resourceName: "169.254.169.254#", key: "k" }, "/body/resourceName"],
      [{ kind: "cloud-b-key", resourceName: "evil.example.com/", key: "k" }, "/body/resourceName"],
      [{ kind: "cloud-b-key", resourceName: "-lead", key: "k" }, "/body/resourceName"],
      [
        { kind: "aws-keys", accessKeyId: "AKIA", secretAccessKey: "s", region: "us-east-1.evil.example#" },
        "/body/region",
      ],
    ];
    for (const [fields, pointer] of refused) {
      const res = await call("POST", base(), { name: `r-${refused.findIndex(([f]) => f === fields)}`, ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(res.body.errors[0].pointer).toBe(pointer);
    }
    const created = await call("POST", base(), {
      name: "foundry",
      kind: "cloud-b-key",
      resourceName: "my-res-01",
      key: "k",
    });
    expect(created.status).toBe(201);
    const rotated = await call("PATCH", `${base()}/${created.body.id}`, { resourceName: "localhost:1/x?", key: "k2" });
    expect(rotated.status).toBe(400);
    expect(rotated.body.errors[0].pointer).toBe("/body/resourceName");
  });

  it("refuses fields no HTTP header can carry (400 on the field, the value never repeated)", async () => {
    const injected = `tok-${randomBytes(6).toString("hex")}\r\nX-Injected: 1`;
    const refused: Array<[Record<string, string>, string]> = [
      [{ kind: "http-bearer", token: injected }, "/body/token"],
      [{ kind: "http-header", headerName: "X-Key", value: injected }, "/body/value"],
      [{ kind: "http-header", headerName: "X-Key\r\nX-Injected", value: "v" }, "/body/headerName"],
      [{ kind: "http-header", headerName: "Host", value: "admin.internal" }, "/body/headerName"],
      [{ kind: "http-basic", username: "u", password: "p\u0000w" }, "/body/password"],
    ];
    for (const [i, [fields, pointer]] of refused.entries()) {
      const res = await call("POST", base(), { name: `hdr-${i}`, ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(res.body.errors[0].pointer).toBe(pointer);
      expect(JSON.stringify(res.body)).not.toContain("X-Injected: 1");
    }
    const created = await call("POST", base(), {
      name: "hdr-ok",
      kind: "http-header",
      headerName: "X-Key",
      value: "v",
    });
    expect(created.status).toBe(201);
    const rotated = await call("PATCH", `${base()}/${created.body.id}`, { value: injected });
    expect(rotated.status).toBe(400);
    expect(rotated.body.errors[0].pointer).toBe("/body/value");
  });

  it("resolves the plaintext for services only, counting each use; another project's id is 404", async () => {
    const { body: list } = await call("GET", base());
    const bearer = list.items.find((c: { name: string }) => c.name === "bearer");
    const resolved = await resolve(bearer.id);
    expect(resolved.body).toMatchObject({ kind: "http-bearer", fields: { token: SECRETS.bearer }, version: 1 });
    await resolve(bearer.id);
    const after = await call("GET", `${base()}/${bearer.id}`);
    expect(after.body.useCount).toBe(2);
    expect(after.body.lastUsedAt).toBeDefined();
    const asUser = await h.call("POST", internalResolveCredentialRoute.path, {
      as: h.owner,
      body: { credentialId: bearer.id, projectId },
    });
    expect(asUser.status).toBe(403);
    const elsewhere = await h.project("elsewhere");
    expect((await resolve(bearer.id, {}, elsewhere)).status).toBe(404);
    const other = await secondOrg(h);
    expect((await call("GET", `${base()}/${bearer.id}`, undefined, other.owner)).status).toBe(404);
  });

  it("rotates: a new secret version, the previous one resolvable through the grace period", async () => {
    const { body: list } = await call("GET", base());
    const bearer = list.items.find((c: { name: string }) => c.name === "bearer");
    const rotated = await call("PATCH", `${base()}/${bearer.id}`, { token: SECRETS.rotated });
    expect(rotated.body).toMatchObject({ secretVersion: 2 });
    expect(rotated.body.rotatedAt).toBeDefined();
    expect((await resolve(bearer.id)).body.fields.token).toBe(SECRETS.rotated);
    expect((await resolve(bearer.id, { version: 1 })).body.fields.token).toBe(SECRETS.bearer);
    expect((await resolve(bearer.id, { version: 3 })).status).toBe(404);
  });

  it("assumes an aws-role through STS with the external id", async () => {
    const role = await call("POST", base(), {
      name: "role",
      kind: "aws-role",
      roleArn: "arn:aws:iam::123456789012:role/agents",
      externalId: SECRETS.external,
    });
    expect(role.body.metadata).toEqual({ roleArn: "arn:aws:iam::123456789012:role/agents" });
    const resolved = await resolve(role.body.id);
    expect(resolved.body.fields).toMatchObject({ accessKeyId: "ASIATESTSESSION1", sessionToken: "session-token" });
    expect(resolved.body.expiresAt).toBeDefined();
    expect(stsCalls[0]).toContain("Action=AssumeRole");
    expect(stsCalls[0]).toContain(encodeURIComponent("arn:aws:iam::123456789012:role/agents"));
    expect(stsCalls[0]).toContain(SECRETS.external);
  });

  it("master key rotation: a start with both keys re-wraps every record, then the new key alone opens them", async () => {
    const { body: list } = await call("GET", base());
    const aws = list.items.find((c: { name: string }) => c.name === "aws");
    const db = h.governance.context.db;
    const keyIds = async () =>
      new Set((await db.selectFrom("credentials").select("key_id").execute()).map((r) => r.key_id));
    const before = await keyIds();
    expect(before.size).toBe(1);
    // The wrong previous key opens nothing: the start stops, naming a credential.
    await expect(
      startHarness(opened.database, {
        tenancy: h.tenancy,
        logger: logs,
        config: { secretKey: K2, previousSecretKey: K2 },
      }),
    ).rejects.toThrow(/the credential \S+ opens with neither AGENTPLANE_SECRET_KEY nor AGENTPLANE_SECRET_KEY_PREVIOUS/);
    const rotatedKeys = await startHarness(opened.database, {
      tenancy: h.tenancy,
      logger: logs,
      config: { secretKey: K2, previousSecretKey: K1 },
    });
    try {
      const after = await keyIds();
      expect(after.size).toBe(1);
      expect([...after][0]).not.toBe([...before][0]);
      expect(logs.lines.some((l) => l.includes("credential data keys re-wrapped under the current master key"))).toBe(
        true,
      );
      const viaCurrent = await rotatedKeys.internal(internalResolveCredentialRoute.path, {
        credentialId: aws.id,
        projectId,
      });
      expect((await json<{ fields: { secretAccessKey: string } }>(viaCurrent)).fields.secretAccessKey).toBe(
        SECRETS.awsSecret,
      );
      // Another replica's start, or the next one, finds nothing left to do.
      expect(await rewrapCredentials(db, { current: K2, previous: K1 })).toBe(0);
    } finally {
      await rotatedKeys.close();
    }
    const newOnly = await startHarness(opened.database, {
      tenancy: h.tenancy,
      logger: logs,
      config: { secretKey: K2 },
    });
    try {
      const res = await newOnly.internal(internalResolveCredentialRoute.path, { credentialId: aws.id, projectId });
      expect((await json<{ fields: { secretAccessKey: string } }>(res)).fields.secretAccessKey).toBe(SECRETS.awsSecret);
      // The rotated-out bearer secret was re-wrapped too and still resolves in its grace period.
      const bearer = list.items.find((c: { name: string }) => c.name === "bearer");
      const old = await newOnly.internal(internalResolveCredentialRoute.path, {
        credentialId: bearer.id,
        projectId,
        version: 1,
      });
      expect(old.status).toBe(200);
    } finally {
      await newOnly.close();
    }
    // The old key alone no longer opens anything.
    expect((await resolve(aws.id)).status).toBe(500);
  });

  it("never lets a secret into a response after create, a log line or an audit record", async () => {
    await h.settle();
    const audit = JSON.stringify(h.audit);
    expect(h.audit.some((r) => r.action === "credential.created")).toBe(true);
    for (const secret of Object.values(SECRETS)) {
      for (const body of bodies) expect(body).not.toContain(secret);
      expect(audit).not.toContain(secret);
      for (const line of logs.lines) expect(line).not.toContain(secret);
    }
  });
});
