import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

const SIGV4 =
  "AWS4-HMAC-SHA256 Credential=agentplane/20260101/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=00";
const FORGED =
  "AWS4-HMAC-SHA256 Credential=agentplane/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=00";

/**
 * `x-agentplane-aws-authorization` tells connections-svc the SigV4 header an AWS SDK signed with
 * (the service and region of its credential scope). Only the gateway says it, from the caller's
 * own Authorization header: one a caller sends itself never reaches a service.
 */
describe("the AWS SigV4 header a service is told of", () => {
  let h: Harness;
  const seen: (string | null)[] = [];
  beforeAll(async () => {
    h = await startHarness({
      extraTargets: {
        connections: {
          fetch: async (request) => {
            seen.push(request.headers.get("x-agentplane-aws-authorization"));
            return Response.json({});
          },
          ready: async () => true,
        },
      },
    });
  });
  afterAll(() => h.close());

  it("is the caller's own SigV4 Authorization on the AWS proxy", async () => {
    seen.length = 0;
    const res = await call(h, "GET", "/v1/aws-connections/awc_x/aws/bucket", {
      token: null,
      headers: { authorization: SIGV4, "x-amz-security-token": h.ownerToken, "x-agentplane-aws-authorization": FORGED },
    });
    expect(res.status).toBe(200);
    expect(seen).toEqual([SIGV4]);
  });

  it("is never one the caller sent with a bearer token, on the AWS proxy or any other route", async () => {
    seen.length = 0;
    const headers = { "x-agentplane-aws-authorization": FORGED };
    expect((await call(h, "GET", "/v1/aws-connections/awc_x/aws/bucket", { headers })).status).toBe(200);
    expect((await call(h, "GET", "/v1/aws-connections/awc_x", { headers })).status).toBe(200);
    expect(seen).toEqual([null, null]);
  });
});
