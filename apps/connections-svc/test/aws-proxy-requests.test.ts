import type { IncomingHttpHeaders } from "node:http";
import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";
import { UPSTREAM_KEY } from "./fixtures/aws-stand-ins.ts";
import { createProjectCredential } from "./fixtures/governance-policy.ts";

const pg = await requirePostgres();

type Problem = { status?: number; detail?: string; reason?: string };

/**
 * What of a caller's request the AWS proxy sends on: the endpoint (an override may be any server a
 * project admin names) gets the call re-signed, and none of the caller's own credentials for the
 * platform; a service named like a property of every JavaScript object is just a service name.
 */
describe.skipIf(!pg.available)(`what the AWS proxy sends to the endpoint${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let endpoint: LocalServer;
  let connectionId: string;
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    endpoint = await startLocalServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
    });
    h = await startConnectionsPlatform({
      env: { CONNECTOR_ALLOWED_HOSTS: `127.0.0.1:${endpoint.port}`, AWS_UPSTREAM_TIMEOUT_MS: "800" },
    });
    const credentialId = await createProjectCredential(h, { name: "keys", kind: "aws-keys", ...UPSTREAM_KEY });
    const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/aws-connections`, {
      token: h.adminToken,
      body: { name: "minio", credentialId, defaultRegion: "eu-west-1", endpoints: { s3: endpoint.url } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    connectionId = created.body.id;
  });
  afterAll(async () => {
    await h?.close();
    await endpoint?.close();
  });

  it("sends none of the caller's cookies, CSRF token or proxy credentials to the endpoint", async () => {
    seen.length = 0;
    const put = await h.call("PUT", `/v1/aws-connections/${connectionId}/aws/reports/q4.csv`, {
      token: h.memberToken,
      headers: {
        "x-agentplane-aws-service": "s3",
        "x-agentplane-aws-region": "eu-west-1",
        "content-type": "text/csv",
        cookie: "console_prefs=dark; tracking=visitor-7",
        "x-csrf-token": "csrf-of-the-callers-session",
        "proxy-authorization": "Basic Y2FsbGVyOnNlY3JldA==",
      },
      body: "a,b\n1,2\n",
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(seen).toHaveLength(1);
    const sent = seen[0] ?? {};
    for (const name of ["cookie", "x-csrf-token", "proxy-authorization"]) expect(sent[name], name).toBeUndefined();
    const signed = JSON.stringify(sent);
    for (const secret of ["visitor-7", "csrf-of-the-callers-session", "Y2FsbGVyOnNlY3JldA=="]) {
      expect(signed).not.toContain(secret);
    }
    // The call itself goes on, re-signed with the connection's key and its own content type.
    expect(sent.authorization).toContain(`Credential=${UPSTREAM_KEY.accessKeyId}/`);
    expect(sent["content-type"]).toBe("text/csv");
  });

  it("a service named like an object property is no 500: it has no override and goes to its AWS host", async () => {
    seen.length = 0;
    // `constructor` is the one such property a service name's pattern (lower case) lets through.
    for (const service of ["constructor"]) {
      const r = await h.call<Problem>("GET", `/v1/aws-connections/${connectionId}/aws/`, {
        token: h.memberToken,
        headers: { "x-agentplane-aws-service": service, "x-agentplane-aws-region": "eu-west-1" },
      });
      // Not reachable from here (no such AWS host, or no network): a gateway problem naming it.
      expect([502, 504], `${service}: ${JSON.stringify(r.body)}`).toContain(r.status);
      expect(r.body.detail, service).toContain(`${service}.eu-west-1.amazonaws.com`);
    }
    expect(seen).toEqual([]);
  });
});
