/**
 * The fields each credential kind takes (the API's `CREDENTIAL_FIELDS`): the form asks for these,
 * and marks the secret ones as passwords. The API checks them again; its errors name the field.
 */
export const CREDENTIAL_KINDS: Record<string, { required: string[]; optional: string[]; secret: string[] }> = {
  "http-bearer": { required: ["token"], optional: [], secret: ["token"] },
  "http-header": { required: ["headerName", "value"], optional: [], secret: ["value"] },
  "http-basic": { required: ["username", "password"], optional: [], secret: ["password"] },
  "aws-keys": {
    required: ["accessKeyId", "secretAccessKey"],
    optional: ["sessionToken", "region"],
    secret: ["secretAccessKey", "sessionToken"],
  },
  "aws-role": { required: ["roleArn"], optional: ["externalId", "region", "sessionName"], secret: ["externalId"] },
  "cloud-a-bearer": { required: ["token"], optional: [], secret: ["token"] },
  "cloud-a-keys": {
    required: ["accessKeyId", "secretAccessKey"],
    optional: ["sessionToken"],
    secret: ["secretAccessKey", "sessionToken"],
  },
  "cloud-b-key": { required: ["resourceName", "key"], optional: [], secret: ["key"] },
};

/** The fields a rotation replaces: the secret ones (required first). */
export function secretFields(kind: string): string[] {
  const k = CREDENTIAL_KINDS[kind];
  return k ? [...k.required, ...k.optional].filter((f) => k.secret.includes(f)) : [];
}
