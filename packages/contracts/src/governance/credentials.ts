import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import { CREDENTIAL_KINDS, type CredentialKind } from "./internal.ts";
import {
  GovDescription,
  GovLabels,
  GovName,
  GovPageQuery,
  GovProjectParams,
  jsonBody,
  jsonRequest,
  NoContent,
} from "./shared.ts";

/**
 * A cloud-b resource name: one DNS label. It becomes the host `https://<name>.<vendor host>` the
 * inference proxy connects to, so anything else (`127.0.0.1:8080/x?`, `host#`) would aim the
 * proxy at a host of the tenant's choosing, past the address policy.
 */
export const CLOUD_B_RESOURCE_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?$/;

/**
 * The fields of each credential kind: `secret` ones are encrypted and never returned; `public`
 * ones are kept in clear and shown (`hint` ones only as their last 4 characters).
 */
export const CREDENTIAL_FIELDS: Record<
  CredentialKind,
  { required: readonly string[]; optional: readonly string[]; secret: readonly string[]; hint: readonly string[] }
> = {
  "cloud-a-bearer": { required: ["token"], optional: [], secret: ["token"], hint: [] },
  "cloud-a-keys": {
    required: ["accessKeyId", "secretAccessKey"],
    optional: ["sessionToken"],
    secret: ["secretAccessKey", "sessionToken"],
    hint: ["accessKeyId"],
  },
  "cloud-b-key": { required: ["resourceName", "key"], optional: [], secret: ["key"], hint: [] },
  "aws-keys": {
    required: ["accessKeyId", "secretAccessKey"],
    optional: ["sessionToken", "region"],
    secret: ["secretAccessKey", "sessionToken"],
    hint: ["accessKeyId"],
  },
  "aws-role": {
    required: ["roleArn"],
    optional: ["externalId", "region", "sessionName"],
    secret: ["externalId"],
    hint: [],
  },
  "http-bearer": { required: ["token"], optional: [], secret: ["token"], hint: [] },
  // `headerName`, not `name`: `name` is the credential's own name (resolve also answers it as `name`).
  "http-header": { required: ["headerName", "value"], optional: [], secret: ["value"], hint: [] },
  "http-basic": { required: ["username", "password"], optional: [], secret: ["password"], hint: [] },
};

const Field = z
  .string()
  .min(1)
  .max(16 * 1024);

export const CredentialSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    orgId: z.string(),
    name: z.string(),
    kind: z.enum(CREDENTIAL_KINDS),
    description: z.string().optional(),
    labels: z.record(z.string(), z.string()),
    /** Non-secret fields (e.g. `roleArn`, `resourceName`) and `<field>Last4` hints (e.g. `accessKeyIdLast4`). */
    metadata: z.record(z.string(), z.string()),
    /** The secret version (1 on create, +1 per rotation). */
    secretVersion: z.number().int(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    rotatedAt: Timestamp.optional(),
    lastUsedAt: Timestamp.optional(),
    useCount: z.number().int(),
  })
  .openapi("Credential");
export type CredentialResource = z.infer<typeof CredentialSchema>;

export const CredentialList = z
  .object({ items: z.array(CredentialSchema), nextCursor: z.string().optional() })
  .openapi("CredentialList");

/** `{name, kind, description?, labels?, ...fields of the kind}`; the fields are checked per kind. */
export const CreateCredentialBody = z
  .object({
    name: GovName,
    kind: z.enum(CREDENTIAL_KINDS),
    description: GovDescription.optional(),
    labels: GovLabels.optional(),
  })
  .catchall(Field)
  .openapi("CreateCredential");

/** Metadata changes, and/or new secret fields of the same kind (a rotation: new secret version). */
export const UpdateCredentialBody = z
  .object({ name: GovName.optional(), description: GovDescription.optional(), labels: GovLabels.optional() })
  .catchall(Field)
  .openapi("UpdateCredential");

const CredentialParams = GovProjectParams.extend({
  credentialId: pathParam("credentialId", "cred_01jc2x3y4z5a6b7c8d9e0f1g2h"),
});
const tags = ["Governance"];

export const listCredentialsRoute = defineRoute(
  { service: "governance", access: "credentials:manage" },
  {
    operationId: "listCredentials",
    method: "get",
    path: "/v1/projects/{projectId}/credentials",
    tags,
    summary: "Credentials of a project (metadata only)",
    description:
      "The project's credentials: kind, non-secret fields (such as an access key id's last 4 characters), created, rotated and last used. Never a secret.",
    request: { params: GovProjectParams, query: GovPageQuery },
    responses: { 200: jsonBody(CredentialList, "One page of credentials") },
  },
);
export const createCredentialRoute = defineRoute(
  { service: "governance", access: "credentials:manage" },
  {
    operationId: "createCredential",
    method: "post",
    path: "/v1/projects/{projectId}/credentials",
    tags,
    summary: "Store a credential (encrypted; the secret is never returned)",
    description:
      "Stores a credential of a kind (`cloud-a-bearer`, `cloud-a-keys`, `cloud-b-key`, `aws-keys`, `aws-role`, `http-bearer`, `http-header`, `http-basic`) with its fields, encrypted with a data key of its own wrapped by the installation's master key. The secret is never returned, logged or audited.",
    request: { params: GovProjectParams, ...jsonRequest(CreateCredentialBody) },
    responses: {
      201: jsonBody(CredentialSchema, "Created"),
      ...limitedCreateConflict("credentials", "A credential of this name exists in the project"),
    },
  },
);
export const getCredentialRoute = defineRoute(
  { service: "governance", access: "credentials:manage" },
  {
    operationId: "getCredential",
    method: "get",
    path: "/v1/projects/{projectId}/credentials/{credentialId}",
    tags,
    summary: "A credential's metadata",
    description: "One credential's metadata.",
    request: { params: CredentialParams },
    responses: { 200: jsonBody(CredentialSchema, "The credential") },
  },
);
export const updateCredentialRoute = defineRoute(
  { service: "governance", access: "credentials:manage" },
  {
    operationId: "updateCredential",
    method: "patch",
    path: "/v1/projects/{projectId}/credentials/{credentialId}",
    tags,
    summary: "Change metadata or rotate the secret (the previous secret stays usable for a grace period)",
    description:
      "Changes name, description or labels, or rotates the secret: the new secret is version n+1 and the previous one stays usable for a grace period so calls in flight finish.",
    request: { params: CredentialParams, ...jsonRequest(UpdateCredentialBody) },
    responses: { 200: jsonBody(CredentialSchema, "Updated") },
  },
);
export const deleteCredentialRoute = defineRoute(
  { service: "governance", access: "credentials:manage" },
  {
    operationId: "deleteCredential",
    method: "delete",
    path: "/v1/projects/{projectId}/credentials/{credentialId}",
    tags,
    summary: "Delete a credential",
    description: "Deletes the credential; proxies and connectors using it stop being able to call.",
    request: { params: CredentialParams },
    responses: { 204: NoContent },
  },
);

export const credentialRoutes = [
  listCredentialsRoute,
  createCredentialRoute,
  getCredentialRoute,
  updateCredentialRoute,
  deleteCredentialRoute,
] as const;
