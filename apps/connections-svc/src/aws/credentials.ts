import { ProblemError } from "@agentplane/problem-details";
import { AssumeRoleCommand, STSClient } from "@aws-sdk/client-sts";
import type { ConnectionsContext } from "../context.ts";
import type { AwsConnectionRow } from "../services/aws-connections.ts";
import { awsEndpoint } from "../services/aws-connections.ts";
import { resolveCredential } from "../services/governance.ts";
import type { AwsCredentials } from "./resign.ts";

/** Assumed-role credentials are reused until this long before they expire, then refreshed. */
const REFRESH_BEFORE_MS = 5 * 60_000;

/**
 * The connection's AWS credentials from its governance credential: `aws-keys` as they are,
 * `aws-role` assumed through STS with its external id (cached per connection until shortly
 * before expiry; expired credentials are never used).
 */
export class AwsCredentialResolver {
  private readonly ctx: ConnectionsContext;
  private readonly assumed = new Map<
    string,
    { expires: number; value: Promise<AwsCredentials & { expires: number }> }
  >();

  constructor(ctx: ConnectionsContext) {
    this.ctx = ctx;
  }

  async resolve(connection: AwsConnectionRow): Promise<AwsCredentials> {
    const credential = await resolveCredential(this.ctx, connection.credential_id, connection.project_id);
    const f = credential.fields;
    if (credential.kind === "aws-keys") {
      if (!f.accessKeyId || !f.secretAccessKey) throw misconfigured("aws-keys needs accessKeyId and secretAccessKey");
      return { accessKeyId: f.accessKeyId, secretAccessKey: f.secretAccessKey, sessionToken: f.sessionToken };
    }
    if (credential.kind !== "aws-role")
      throw misconfigured(`credential kind ${credential.kind} is not an AWS credential`);
    if (!f.roleArn || !f.accessKeyId || !f.secretAccessKey) {
      throw misconfigured("aws-role needs roleArn and the accessKeyId and secretAccessKey that assume it");
    }
    const key = `${connection.id}\u0000${credential.id}\u0000${f.roleArn}`;
    const hit = this.assumed.get(key);
    if (hit && hit.expires - REFRESH_BEFORE_MS > Date.now()) return hit.value;
    const value = this.assume(
      connection,
      f as Record<string, string> & { roleArn: string; accessKeyId: string; secretAccessKey: string },
    );
    this.assumed.set(key, { expires: Number.POSITIVE_INFINITY, value });
    try {
      const creds = await value;
      this.assumed.set(key, { expires: creds.expires, value });
      return creds;
    } catch (err) {
      this.assumed.delete(key);
      throw err;
    }
  }

  private async assume(
    connection: AwsConnectionRow,
    f: { roleArn: string; accessKeyId: string; secretAccessKey: string; externalId?: string; sessionToken?: string },
  ): Promise<AwsCredentials & { expires: number }> {
    const region = connection.default_region;
    const sts = new STSClient({
      region,
      endpoint: awsEndpoint(connection, "sts", region).toString(),
      credentials: { accessKeyId: f.accessKeyId, secretAccessKey: f.secretAccessKey, sessionToken: f.sessionToken },
    });
    const out = await sts.send(
      new AssumeRoleCommand({
        RoleArn: f.roleArn,
        RoleSessionName: `agentplane-${connection.id}`.slice(0, 64),
        ...(f.externalId ? { ExternalId: f.externalId } : {}),
      }),
    );
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.Expiration) throw misconfigured("STS returned no credentials");
    return {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
      expires: c.Expiration.getTime(),
    };
  }
}

function misconfigured(detail: string): ProblemError {
  return new ProblemError("unprocessable", { detail });
}
