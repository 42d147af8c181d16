import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { defineRoute } from "../common/route.ts";
import { CursorPage, pathParam, Timestamp } from "../common/schemas.ts";
import { urlCredentialValues } from "../common/url-credentials.ts";
import { LabelsSchema } from "../sandbox/schemas.ts";
import { jsonBody, jsonRequest, NoContent, PageQuery, ProjectIdParams } from "../tenancy/shared.ts";

/**
 * An AWS region and service as SigV4 credential scopes and endpoint host names carry them
 * (`eu-west-1`, `us-gov-west-1`; `s3`, `execute-api`): nothing a URL could read as more than a label.
 */
export const AWS_REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
export const AWS_SERVICE_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

const Region = z.string().regex(AWS_REGION_PATTERN, "an AWS region such as eu-west-1");
const EndpointUrl = z
  .url({ protocol: /^https?$/, error: "an http or https URL" })
  .refine((u) => !/^[a-z]+:\/\/[^/?#]*@/i.test(u), "an endpoint URL without user name or password")
  // Requests through it are signed (SigV4): a credential in its query would only be shown to viewers.
  .refine((u) => urlCredentialValues(u).length === 0, "an endpoint URL without a credential in its query");
const Endpoints = z
  .record(z.string().regex(AWS_SERVICE_PATTERN, "an AWS service name such as s3"), EndpointUrl)
  .refine((e) => Object.keys(e).length <= 50, "at most 50 endpoint overrides");

export const AwsConnection = z
  .object({
    id: z.string(),
    orgId: z.string(),
    projectId: z.string(),
    name: z.string(),
    description: z.string().optional(),
    /** A governance credential of kind `aws-keys` or `aws-role`. */
    credentialId: z.string(),
    defaultRegion: z.string(),
    /** Service → endpoint URL (private endpoints, tests); otherwise `https://{service}.{region}.amazonaws.com`. */
    endpoints: z.record(z.string(), z.string()),
    labels: z.record(z.string(), z.string()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("AwsConnection");
export type AwsConnection = z.infer<typeof AwsConnection>;
export const AwsConnectionList = CursorPage(AwsConnection).openapi("AwsConnectionList");

export const CreateAwsConnectionBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(1000).optional(),
    credentialId: z.string().min(1).max(64),
    defaultRegion: Region,
    endpoints: Endpoints.optional(),
    labels: LabelsSchema.optional(),
  })
  .openapi("CreateAwsConnection");
export const UpdateAwsConnectionBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional(),
    description: z.string().max(1000).optional(),
    credentialId: z.string().min(1).max(64).optional(),
    defaultRegion: Region.optional(),
    endpoints: Endpoints.optional(),
    labels: LabelsSchema.optional(),
  })
  .openapi("UpdateAwsConnection");

export const AwsConnectionTestResult = z
  .object({ account: z.string(), arn: z.string(), userId: z.string().optional() })
  .openapi("AwsConnectionTestResult");

export const AwsConnectionIdParams = z.object({
  connectionId: pathParam("connectionId", "awc_01jc2x3y4z5a6b7c8d9e0f1g2h"),
});
const AwsProxyParams = AwsConnectionIdParams.extend({
  path: z
    .string()
    .min(1)
    .openapi({ param: { name: "path", in: "path" }, example: "my-bucket/reports/q4.csv" }),
});

const tags = ["AWS connections"];

export const createAwsConnectionRoute = defineRoute(
  { service: "connections", access: "connections:manage" },
  {
    operationId: "createAwsConnection",
    method: "post",
    path: "/v1/projects/{projectId}/aws-connections",
    tags,
    summary: "Connect an AWS account through a governance credential",
    description:
      "Creates a connection to an AWS account through a governance credential (`aws-keys`, or `aws-role` assumed through STS with its external id, cached until shortly before expiry), with a default region and optional endpoint overrides per service.",
    request: { params: ProjectIdParams, ...jsonRequest(CreateAwsConnectionBody) },
    responses: { 201: jsonBody(AwsConnection, "Created"), ...limitedCreateConflict("aws-connections") },
  },
);
export const listAwsConnectionsRoute = defineRoute(
  { service: "connections", access: "connections:read" },
  {
    operationId: "listAwsConnections",
    method: "get",
    path: "/v1/projects/{projectId}/aws-connections",
    tags,
    summary: "AWS connections of a project",
    description: "The project's AWS connections, cursor-paged.",
    request: { params: ProjectIdParams, query: PageQuery },
    responses: { 200: jsonBody(AwsConnectionList, "One page") },
  },
);
export const getAwsConnectionRoute = defineRoute(
  { service: "connections", access: "connections:read" },
  {
    operationId: "getAwsConnection",
    method: "get",
    path: "/v1/aws-connections/{connectionId}",
    tags,
    summary: "An AWS connection",
    description: "One AWS connection: its credential reference, default region and endpoint overrides; never a secret.",
    request: { params: AwsConnectionIdParams },
    responses: { 200: jsonBody(AwsConnection, "The connection") },
  },
);
export const updateAwsConnectionRoute = defineRoute(
  { service: "connections", access: "connections:manage" },
  {
    operationId: "updateAwsConnection",
    method: "patch",
    path: "/v1/aws-connections/{connectionId}",
    tags,
    summary: "Change an AWS connection",
    description: "Changes a connection's name, credential, default region, endpoints or labels.",
    request: { params: AwsConnectionIdParams, ...jsonRequest(UpdateAwsConnectionBody) },
    responses: { 200: jsonBody(AwsConnection, "Updated") },
  },
);
export const deleteAwsConnectionRoute = defineRoute(
  { service: "connections", access: "connections:manage" },
  {
    operationId: "deleteAwsConnection",
    method: "delete",
    path: "/v1/aws-connections/{connectionId}",
    tags,
    summary: "Delete an AWS connection",
    description: "Deletes the connection; calls through its proxy stop at once.",
    request: { params: AwsConnectionIdParams },
    responses: { 204: NoContent },
  },
);
export const testAwsConnectionRoute = defineRoute(
  { service: "connections", access: "connections:manage" },
  {
    operationId: "testAwsConnection",
    method: "post",
    path: "/v1/aws-connections/{connectionId}/test",
    tags,
    summary: "Call STS GetCallerIdentity with the connection's credentials",
    description:
      "Calls STS `GetCallerIdentity` with the connection's credentials and reports the account and ARN they act as.",
    request: { params: AwsConnectionIdParams },
    responses: { 200: jsonBody(AwsConnectionTestResult, "The account and ARN") },
  },
);

function awsProxyRoute<const M extends "get" | "post" | "put" | "patch" | "delete">(method: M, operationId: string) {
  return defineRoute(
    { service: "connections", access: "connectors:call" },
    {
      operationId,
      method,
      path: "/v1/aws-connections/{connectionId}/aws/{path}",
      tags,
      summary:
        "AWS API through the connection, re-signed with its credentials after an aws:call decision; Bearer token with x-agentplane-aws-service/-region, or an unchanged SDK with access key agentplane and the token as session token",
      description:
        "Removes whatever signature the caller sent and re-signs the request with the connection's credentials (SigV4), streaming the answer back. Two ways to call it: plain HTTP with `Authorization: Bearer <token>` and the service and region in `x-agentplane-aws-service` / `x-agentplane-aws-region`; or an unchanged AWS SDK or CLI with this URL as endpoint, access key id `agentplane`, any secret and the Agentplane token as session token (service and region then come from the SigV4 credential scope). The operation (from `X-Amz-Target`, the query `Action`, or S3's method and path) is decided as `aws:call` first: a deny is a 403 `policy-denied` with the rule id. A service that cannot be determined is a 400.",
      request: { params: AwsProxyParams },
      responses: { 200: { description: "The AWS answer, as AWS sent it" } },
    },
  );
}
/** The service root (`POST /` of query and JSON protocols such as STS, SQS, DynamoDB). */
function awsProxyRootRoute<const M extends "get" | "post">(method: M, operationId: string) {
  return defineRoute(
    { service: "connections", access: "connectors:call" },
    {
      operationId,
      method,
      path: "/v1/aws-connections/{connectionId}/aws",
      tags,
      summary: "The AWS service root through the connection (query and JSON protocols post here)",
      description:
        "Removes whatever signature the caller sent and re-signs the request with the connection's credentials (SigV4), streaming the answer back. Two ways to call it: plain HTTP with `Authorization: Bearer <token>` and the service and region in `x-agentplane-aws-service` / `x-agentplane-aws-region`; or an unchanged AWS SDK or CLI with this URL as endpoint, access key id `agentplane`, any secret and the Agentplane token as session token (service and region then come from the SigV4 credential scope). The operation (from `X-Amz-Target`, the query `Action`, or S3's method and path) is decided as `aws:call` first: a deny is a 403 `policy-denied` with the rule id. A service that cannot be determined is a 400.",
      request: { params: AwsConnectionIdParams },
      responses: { 200: { description: "The AWS answer, as AWS sent it" } },
    },
  );
}
export const awsProxyRootGetRoute = awsProxyRootRoute("get", "awsProxyRootGet");
export const awsProxyRootPostRoute = awsProxyRootRoute("post", "awsProxyRootPost");
export const awsProxyGetRoute = awsProxyRoute("get", "awsProxyGet");
export const awsProxyPostRoute = awsProxyRoute("post", "awsProxyPost");
export const awsProxyPutRoute = awsProxyRoute("put", "awsProxyPut");
export const awsProxyPatchRoute = awsProxyRoute("patch", "awsProxyPatch");
export const awsProxyDeleteRoute = awsProxyRoute("delete", "awsProxyDelete");

export const awsRoutes = [
  createAwsConnectionRoute,
  listAwsConnectionsRoute,
  getAwsConnectionRoute,
  updateAwsConnectionRoute,
  deleteAwsConnectionRoute,
  testAwsConnectionRoute,
  awsProxyRootGetRoute,
  awsProxyRootPostRoute,
  awsProxyGetRoute,
  awsProxyPostRoute,
  awsProxyPutRoute,
  awsProxyPatchRoute,
  awsProxyDeleteRoute,
] as const;
