import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";
import { UPSTREAM_KEY } from "./fixtures/aws-stand-ins.ts";
import { createProjectCredential } from "./fixtures/governance-policy.ts";

const pg = await requirePostgres();

/**
 * An AWS answer is served from the platform's origin, where the console's session lives: an S3
 * object stored as `text/html` (anyone who can write to the bucket) or an endpoint override
 * pointing elsewhere must not run script there, set its cookies or speak for the platform.
 */
describe.skipIf(!pg.available)(`what of an AWS answer reaches the caller${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let endpoint: LocalServer;
  let connectionId: string;

  beforeAll(async () => {
    endpoint = await startLocalServer((_req, res) => {
      res.writeHead(200, {
        "content-type": "text/html",
        "set-cookie": "agentplane_session=planted; Path=/",
        "content-security-policy": "script-src *",
        "access-control-allow-origin": "*",
        "x-agentplane-resource-org": "org_someone_else",
        "clear-site-data": '"*"',
        etag: '"abc"',
      });
      res.end("<script>document.title='pwned'</script>");
    });
    h = await startConnectionsPlatform({ env: { CONNECTOR_ALLOWED_HOSTS: `127.0.0.1:${endpoint.port}` } });
    const credentialId = await createProjectCredential(h, { name: "keys", kind: "aws-keys", ...UPSTREAM_KEY });
    const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/aws-connections`, {
      token: h.adminToken,
      body: { name: "html", credentialId, defaultRegion: "eu-west-1", endpoints: { s3: endpoint.url } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    connectionId = created.body.id;
  });
  afterAll(async () => {
    await h?.close();
    await endpoint?.close();
  });

  it("renders an HTML answer only as a sandboxed document, with none of its origin-wide headers", async () => {
    const res = await fetch(`${h.url}/v1/aws-connections/${connectionId}/aws/bucket/page.html`, {
      headers: {
        authorization: `Bearer ${h.memberToken}`,
        "x-agentplane-aws-service": "s3",
        "x-agentplane-aws-region": "eu-west-1",
      },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<script>");
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    for (const name of ["set-cookie", "access-control-allow-origin", "x-agentplane-resource-org", "clear-site-data"]) {
      expect(res.headers.get(name), name).toBeNull();
    }
    // What the AWS clients need passes as it came.
    expect(res.headers.get("content-type")).toBe("text/html");
    expect(res.headers.get("etag")).toBe('"abc"');
  });
});
