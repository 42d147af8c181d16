import {
  AWS_REGION_PATTERN,
  CLOUD_B_RESOURCE_PATTERN,
  CREDENTIAL_FIELDS,
  type CredentialKind,
  headerNameProblem,
  headerValueProblem,
} from "@agentplane/contracts";
import { badRequest } from "@agentplane/problem-details";

const META_KEYS = new Set(["name", "kind", "description", "labels"]);

/**
 * Splits a request body into the kind's fields: every required one present, nothing unknown.
 * `requireAll` is false for an update that changes only metadata. A 400 names the field.
 */
export function fieldsOf(
  kind: CredentialKind,
  body: Record<string, unknown>,
  requireAll: boolean,
): Record<string, string> | undefined {
  const spec = CREDENTIAL_FIELDS[kind];
  const allowed = new Set([...spec.required, ...spec.optional]);
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) {
    if (META_KEYS.has(key)) continue;
    if (!allowed.has(key)) {
      throw badRequest(`A ${kind} credential has no field ${key}`, [
        { pointer: `/body/${key}`, message: `not a field of ${kind}; fields: ${[...allowed].join(", ")}` },
      ]);
    }
    if (typeof value !== "string" || value.length === 0) {
      throw badRequest(`The field ${key} must be a non-empty string`, [{ pointer: `/body/${key}`, message: "string" }]);
    }
    // Every field ends up in a header or a signature of an outbound request; the message never repeats it.
    const unsendable = headerValueProblem(value);
    if (unsendable)
      throw badRequest(`The field ${key} ${unsendable}`, [{ pointer: `/body/${key}`, message: unsendable }]);
    fields[key] = value;
  }
  if (!requireAll && Object.keys(fields).length === 0) return undefined;
  for (const key of spec.required) {
    if (fields[key] === undefined) {
      throw badRequest(`A ${kind} credential needs the field ${key}`, [
        { pointer: `/body/${key}`, message: "required" },
      ]);
    }
  }
  if (kind === "aws-role" && !/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/.test(fields.roleArn ?? "")) {
    throw badRequest("roleArn is not an IAM role ARN", [
      { pointer: "/body/roleArn", message: "arn:aws:iam::<account>:role/<name>" },
    ]);
  }
  const headerName = fields.headerName === undefined ? undefined : headerNameProblem(fields.headerName);
  if (headerName) {
    throw badRequest("headerName cannot be sent as a header", [{ pointer: "/body/headerName", message: headerName }]);
  }
  if (fields.resourceName !== undefined && !CLOUD_B_RESOURCE_PATTERN.test(fields.resourceName)) {
    throw badRequest("resourceName is not a resource name", [
      { pointer: "/body/resourceName", message: "letters, digits and inner hyphens only, at most 64 (one DNS label)" },
    ]);
  }
  if (fields.region !== undefined && !AWS_REGION_PATTERN.test(fields.region)) {
    throw badRequest("region is not an AWS region", [
      { pointer: "/body/region", message: "an AWS region such as eu-west-1" },
    ]);
  }
  return fields;
}

/** What reads show: the non-secret fields in clear and the last 4 characters of hinted ones. */
export function metadataOf(kind: CredentialKind, fields: Record<string, string>): Record<string, string> {
  const spec = CREDENTIAL_FIELDS[kind];
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (spec.secret.includes(key)) continue;
    if (spec.hint.includes(key)) metadata[`${key}Last4`] = value.slice(-4);
    else metadata[key] = value;
  }
  return metadata;
}
