import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";
import { jsonb } from "../src/services/jsonb.ts";
import { type AwsStandIn, startAwsStandIn, UPSTREAM_KEY } from "./fixtures/aws-stand-ins.ts";
import { createProjectCredential } from "./fixtures/governance-policy.ts";

const pg = await requirePostgres();

type Problem = { type?: string; detail?: string; reason?: string; errors?: { pointer: string }[] };

/**
 * Where the AWS proxy and the connection test may send a re-signed request: only where the
 * outbound address policy (`CONNECTOR_ALLOWED_HOSTS`) lets connectors go. Here only the AWS
 * stand-in and two deliberately broken endpoints are allowed; `secret` plays an internal service
 * (the runtime's loopback API) that must never see a request.
 */
describe.skipIf(!pg.available)(`AWS endpoints under the outbound address policy${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let upstream: AwsStandIn;
  let secret: LocalServer;
  let silent: LocalServer;
  let echoing: LocalServer & { code: string; authorization: string };
  let closedPort: number;
  let credentialId: string;
  const secretHits: string[] = [];

  beforeAll(async () => {
    upstream = await startAwsStandIn();
    secret = await startLocalServer((req, res) => {
      secretHits.push(`${req.method} ${req.url}`);
      res.end("internal");
    });
    silent = await startLocalServer(() => {}); // accepts, never answers
    // An STS stand-in that refuses every call, echoing the request's Authorization header (the key
    // id and the signature) into its error's message, and `code` as the error code.
    const echo = { code: "InvalidClientTokenId", authorization: "" };
    const echoServer = await startLocalServer((req, res) => {
      echo.authorization = req.headers.authorization ?? "";
      res.writeHead(403, { "content-type": "text/xml" });
      res.end(
        `<ErrorResponse><Error><Type>Sender</Type><Code>${echo.code}</Code><Message>The request signed as ${echo.authorization} is not valid</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`,
      );
    });
    echoing = Object.defineProperties(echoServer, {
      code: {
        get: () => echo.code,
        set: (code: string) => {
          echo.code = code;
        },
      },
      authorization: { get: () => echo.authorization },
    }) as typeof echoing;
    const closing = await startLocalServer(() => {});
    closedPort = closing.port;
    await closing.close();
    const upstreamPort = new URL(upstream.url).port;
    h = await startConnectionsPlatform({
      env: {
        CONNECTOR_ALLOWED_HOSTS: [upstreamPort, silent.port, closedPort, echoing.port]
          .map((p) => `127.0.0.1:${p}`)
          .join(","),
        AWS_UPSTREAM_TIMEOUT_MS: "800",
      },
    });
    credentialId = await createProjectCredential(h, { name: "keys", kind: "aws-keys", ...UPSTREAM_KEY });
  });
  afterAll(async () => {
    await h?.close();
    await Promise.all([upstream?.close(), secret?.close(), silent?.close(), echoing?.close()]);
  });

  const create = (endpoints?: Record<string, string>) =>
    h.call<{ id: string } & Problem>("POST", `/v1/projects/${h.projectId}/aws-connections`, {
      token: h.adminToken,
      body: {
        name: `c-${Math.random()}`,
        credentialId,
        defaultRegion: "eu-west-1",
        ...(endpoints ? { endpoints } : {}),
      },
    });
  const connection = async (endpoints?: Record<string, string>): Promise<string> => {
    const created = await create(endpoints);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id;
  };
  const s3 = (id: string, headers: Record<string, string> = {}) =>
    h.call<Problem>("GET", `/v1/aws-connections/${id}/aws/reports/q4.csv`, {
      token: h.memberToken,
      headers: { "x-agentplane-aws-service": "s3", "x-agentplane-aws-region": "eu-west-1", ...headers },
    });
  const test = (id: string) => h.call<Problem>("POST", `/v1/aws-connections/${id}/test`, { token: h.adminToken });

  it("refuses endpoint overrides that name an internal address or another scheme (400 naming the service)", async () => {
    for (const url of [
      secret.url,
      "http://169.254.169.254/latest/meta-data/",
      `http://[::127.0.0.1]:${secret.port}/`,
      `http://[::ffff:127.0.0.1]:${secret.port}/`,
      "http://2130706433/",
      "file:///etc/passwd",
      `http://user:pw@127.0.0.1:${secret.port}/`,
    ]) {
      const refused = await create({ s3: url });
      expect(refused.status, url).toBe(400);
      expect(refused.body.errors?.map((e) => e.pointer).join(" "), url).toMatch(/endpoints/);
    }
    const id = await connection({ s3: upstream.url });
    const patched = await h.call<Problem>("PATCH", `/v1/aws-connections/${id}`, {
      token: h.adminToken,
      body: { endpoints: { sts: "http://169.254.169.254/" } },
    });
    expect(patched.status).toBe(400);
    expect(secretHits).toEqual([]);
    // An allowed endpoint still gets the re-signed call.
    const put = await h.call("PUT", `/v1/aws-connections/${id}/aws/reports/ok.txt`, {
      token: h.memberToken,
      headers: { "x-agentplane-aws-service": "s3", "x-agentplane-aws-region": "eu-west-1" },
      body: "ok",
    });
    expect(put.status).toBe(200);
    expect(upstream.requests.at(-1)).toMatchObject({ accessKeyId: UPSTREAM_KEY.accessKeyId, failure: undefined });
    upstream.requests.length = 0;
  });

  it("refuses a credential in an endpoint override's query, and never shows one stored before", async () => {
    for (const query of ["X-Amz-Security-Token=FQoGZXIvYXdzE", "api_key=k-123", "sig=abc"]) {
      const refused = await create({ s3: `${upstream.url}/?${query}` });
      expect(refused.status, query).toBe(400);
      expect(
        refused.body.errors?.map((e) => e.pointer),
        query,
      ).toEqual(["/body/endpoints/s3"]);
    }
    // A query without credentials is an ordinary override.
    const id = await connection({ s3: `${upstream.url}/?region-hint=eu` });
    // One written before overrides were checked for this: a viewer reads it without the secret.
    await h.connections.context.db
      .updateTable("aws_connections")
      .set({ endpoints: jsonb({ s3: `${upstream.url}/?access_token=tok-0451` }) })
      .where("id", "=", id)
      .execute();
    const read = await h.call<{ endpoints: Record<string, string> }>("GET", `/v1/aws-connections/${id}`, {
      token: h.viewerToken,
    });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.endpoints.s3).toBe(`${upstream.url}/?access_token=REDACTED`);
    expect(JSON.stringify(read.body)).not.toContain("tok-0451");
  });

  it("a name resolving to loopback is refused at call time: proxy and test answer 502 and nothing is sent", async () => {
    const id = await connection({ s3: `http://localhost:${secret.port}`, sts: `http://localhost:${secret.port}` });
    const proxied = await s3(id);
    expect(proxied.status).toBe(502);
    expect(proxied.body.reason).toBe("blocked-address");
    expect(proxied.body.detail).toContain(`localhost:${secret.port}`);
    const tested = await test(id);
    expect(tested.status).toBe(502);
    expect(tested.body.reason).toBe("blocked-address");
    expect(tested.body.detail).not.toContain("STS refused");
    expect(secretHits).toEqual([]);
  });

  it("validates the region and service headers against every reserved URL character (400 naming the header)", async () => {
    // No override: the region and service become labels of the AWS host name.
    const id = await connection();
    for (const region of [
      "x@attacker.example/",
      "eu-west-1.attacker.example",
      "eu-west-1#",
      "eu-west-1?x=1",
      "eu-west-1/",
      "eu-west-1:443",
      "eu-west-1%2fattacker",
      "eu-west-1\\attacker",
      "eu-west-1;x",
      "eu-west-1&x",
      "eu-west-1[",
      "eu west 1",
      "EU-WEST-1",
      "",
    ]) {
      const r = await s3(id, { "x-agentplane-aws-region": region });
      expect(r.status, region).toBe(400);
      expect(r.body.errors?.[0]?.pointer, region).toBe("/headers/x-agentplane-aws-region");
      expect(r.body.detail, region).toContain("x-agentplane-aws-region");
    }
    for (const service of ["s3.attacker.example", "s3@x", "s3/", "s3#", "s3?", "s3:1", "-s3", "s3%2f"]) {
      const r = await s3(id, { "x-agentplane-aws-service": service });
      expect(r.status, service).toBe(400);
      expect(r.body.errors?.[0]?.pointer, service).toBe("/headers/x-agentplane-aws-service");
    }
    // The SigV4 form: a scope whose region is not a region is a 400 too.
    const signed = await h.call<Problem>("GET", `/v1/aws-connections/${id}/aws/reports/q4.csv`, {
      token: null,
      headers: {
        authorization: `AWS4-HMAC-SHA256 Credential=agentplane/20260101/attacker/s3/aws4_request, SignedHeaders=host, Signature=00`,
        "x-amz-security-token": h.memberToken,
        "x-amz-date": "20260101T000000Z",
      },
    });
    expect(signed.status).toBe(400);
    expect(signed.body.detail).toContain("credential scope");
    expect(upstream.requests).toEqual([]);
  });

  it("an endpoint that refuses the connection or does not resolve is a 502 naming the cause, also for the test", async () => {
    for (const [endpoint, cause] of [
      [`http://127.0.0.1:${closedPort}`, "the connection was refused"],
      ["http://nowhere.invalid", "nowhere.invalid does not resolve"],
    ] as const) {
      const id = await connection({ s3: endpoint, sts: endpoint });
      for (const answer of [await s3(id), await test(id)]) {
        expect(answer.status, endpoint).toBe(502);
        expect(answer.body.detail, endpoint).toContain(cause);
        expect(answer.body.detail, endpoint).not.toContain("STS refused the credentials");
      }
    }
  });

  it("an endpoint that never answers is a 504 within the configured time, also for the test", async () => {
    const id = await connection({ s3: silent.url, sts: silent.url });
    const started = Date.now();
    const proxied = await s3(id);
    expect(proxied.status).toBe(504);
    expect(proxied.body.detail).toContain("did not answer in time");
    const tested = await test(id);
    expect(tested.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("STS refusing the test: a 502 naming the status and a known error code, never STS's own words", async () => {
    const id = await connection({ sts: echoing.url });
    const tested = await test(id);
    expect(tested.status).toBe(502);
    expect(tested.body.detail).toBe("STS refused the credentials (HTTP 403): InvalidClientTokenId");
    const signature = /Signature=([0-9a-f]+)/.exec(echoing.authorization)?.[1] ?? "";
    expect(signature).toHaveLength(64);
    // An error code STS is not known to send is not named either: it is the server's text too.
    echoing.code = signature.slice(0, 32);
    const unknown = await test(id);
    expect(unknown.status).toBe(502);
    expect(unknown.body.detail).toBe("STS refused the credentials (HTTP 403)");
    for (const answer of [JSON.stringify(tested.body), JSON.stringify(unknown.body)]) {
      expect(answer).not.toContain(UPSTREAM_KEY.accessKeyId);
      for (let i = 0; i + 6 <= signature.length; i++) expect(answer).not.toContain(signature.slice(i, i + 6));
    }
  });
});
