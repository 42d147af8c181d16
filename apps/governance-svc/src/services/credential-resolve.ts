import type { ResolveCredentialRequest, ResolveCredentialResponse } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { sql } from "kysely";
import { LRUCache } from "lru-cache";
import type { StsConfig } from "../config.ts";
import type { GovernanceContext } from "../context.ts";
import { openCredential } from "./credentials.ts";

/** Assumed-role sessions by credential version, each kept until five minutes before it expires. */
const sessions = new LRUCache<string, { fields: Record<string, string>; expiresAt: Date }>({ max: 10_000 });
const REFRESH_BEFORE_MS = 5 * 60_000;

async function assumeRole(
  sts: StsConfig,
  credentialId: string,
  version: number,
  fields: Record<string, string>,
): Promise<{ fields: Record<string, string>; expiresAt: Date }> {
  const key = `${credentialId}:${version}`;
  // Reused until five minutes before it expires, so each proxied call does not cost an STS round trip.
  const cached = sessions.get(key);
  if (cached) return cached;
  const region = fields.region ?? sts.region ?? "us-east-1";
  // The AWS SDK is loaded on the first role credential, not when the service starts.
  const { AssumeRoleCommand, STSClient } = await import("@aws-sdk/client-sts");
  const client = new STSClient({
    region,
    ...(sts.endpoint ? { endpoint: sts.endpoint } : {}),
    ...(sts.credentials ? { credentials: sts.credentials } : {}),
  });
  try {
    const out = await client.send(
      new AssumeRoleCommand({
        RoleArn: fields.roleArn,
        RoleSessionName: fields.sessionName ?? `agentplane-${credentialId}`.slice(0, 64),
        ...(fields.externalId ? { ExternalId: fields.externalId } : {}),
        DurationSeconds: 3600,
      }),
    );
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) {
      throw new Error("STS returned no credentials");
    }
    const session = {
      fields: {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
        region,
        roleArn: fields.roleArn ?? "",
      },
      expiresAt: c.Expiration,
    };
    const keepMs = session.expiresAt.getTime() - Date.now() - REFRESH_BEFORE_MS;
    if (keepMs > 0) sessions.set(key, session, { ttl: keepMs });
    return session;
  } catch (error) {
    throw stsProblem(credentialId, error);
  } finally {
    client.destroy();
  }
}

/**
 * STS refusing the role (wrong external id, no trust) is the upstream's answer, a 502 naming its
 * error code; STS unreachable is a 503. Neither carries the credential's fields.
 */
function stsProblem(credentialId: string, error: unknown): ProblemError {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined) {
    return new ProblemError("bad-gateway", {
      detail: `STS refused AssumeRole for credential ${credentialId}: ${e.name ?? `HTTP ${status}`}`,
      extensions: { credentialId, upstreamStatus: status, ...(e.name ? { upstreamError: e.name } : {}) },
    });
  }
  return new ProblemError("service-unavailable", {
    detail: `STS could not be reached to assume the role of credential ${credentialId}`,
    headers: { "retry-after": "5" },
    extensions: { credentialId },
  });
}

/**
 * The plaintext a service needs (inference, connections): decrypted here, never logged. Each
 * resolution moves last-used and the use count. `aws-role` answers the assumed role's session.
 */
export async function resolveCredential(
  ctx: GovernanceContext,
  sts: StsConfig,
  request: ResolveCredentialRequest,
): Promise<ResolveCredentialResponse> {
  const { row, fields, version } = await openCredential(ctx, request.projectId, request.credentialId, request.version);
  ctx.counters.credentialResolutions++;
  await ctx.db
    .updateTable("credentials")
    .set({ last_used_at: new Date(), use_count: sql<number>`use_count + 1` })
    .where("id", "=", row.id)
    .execute();
  if (row.kind === "aws-role") {
    const session = await assumeRole(sts, row.id, version, fields);
    return {
      id: row.id,
      kind: "aws-role",
      fields: session.fields,
      version,
      expiresAt: session.expiresAt.toISOString(),
    };
  }
  // An http-header credential is created with `headerName` (its `name` is the credential's own);
  // callers read the header as `{name, value}`.
  const out = row.kind === "http-header" && fields.headerName ? { ...fields, name: fields.headerName } : fields;
  return { id: row.id, kind: row.kind as ResolveCredentialResponse["kind"], fields: out, version };
}
