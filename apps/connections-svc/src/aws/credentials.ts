import { ProblemError } from "@agentplane/problem-details";
import { LRUCache } from "lru-cache";
import type { ConnectionsContext } from "../context.ts";
import type { AwsConnectionRow } from "../services/aws-connections.ts";
import { resolveCredential } from "../services/governance.ts";
import type { AwsCredentials } from "./resign.ts";

/** Assumed-role sessions are reused until this long before they expire, then resolved afresh. */
export const REFRESH_BEFORE_MS = 5 * 60_000;
/** Long-lived keys are re-read this often (a rotated secret reaches the proxy within this time). */
const KEYS_TTL_MS = 30_000;

interface Cached {
  credentials: AwsCredentials;
  /** When the cached entry stops being used (an `aws-role` session: its expiry minus the margin). */
  until: number;
}

/**
 * The connection's AWS credentials from its governance credential: `aws-keys` as they are,
 * `aws-role` as the session governance assumed through STS with the role's external id. Both are
 * cached per project and credential (an `aws-role` session until shortly before it expires), so a
 * proxied call costs no governance round trip; a session that has expired is never used.
 */
export class AwsCredentialResolver {
  private readonly ctx: ConnectionsContext;
  private readonly cache = new LRUCache<string, Cached>({ max: 10_000 });
  private readonly pending = new Map<string, Promise<Cached>>();

  constructor(ctx: ConnectionsContext) {
    this.ctx = ctx;
  }

  async resolve(connection: AwsConnectionRow): Promise<AwsCredentials> {
    const key = `${connection.project_id}\u0000${connection.credential_id}`;
    const hit = this.cache.get(key);
    if (hit && hit.until > Date.now()) return hit.credentials;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.load(connection).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    const fresh = await pending;
    this.cache.set(key, fresh);
    return fresh.credentials;
  }

  private async load(connection: AwsConnectionRow): Promise<Cached> {
    const credential = await resolveCredential(this.ctx, connection.credential_id, connection.project_id);
    const f = credential.fields;
    if (credential.kind !== "aws-keys" && credential.kind !== "aws-role") {
      throw misconfigured(`credential kind ${credential.kind} is not an AWS credential`);
    }
    if (!f.accessKeyId || !f.secretAccessKey) {
      throw misconfigured(
        credential.kind === "aws-keys"
          ? "aws-keys needs accessKeyId and secretAccessKey"
          : "the aws-role credential resolved to no session",
      );
    }
    const credentials: AwsCredentials = {
      accessKeyId: f.accessKeyId,
      secretAccessKey: f.secretAccessKey,
      ...(f.sessionToken ? { sessionToken: f.sessionToken } : {}),
    };
    if (credential.kind === "aws-keys") return { credentials, until: Date.now() + KEYS_TTL_MS };
    const expires = credential.expiresAt ? Date.parse(credential.expiresAt) : Number.NaN;
    if (!Number.isFinite(expires) || expires <= Date.now()) {
      throw new ProblemError("bad-gateway", { detail: "The role's STS session has expired; retry shortly" });
    }
    // Used until shortly before expiry; a session already inside that margin is used for this call only.
    return { credentials, until: Math.max(Date.now(), expires - REFRESH_BEFORE_MS) };
  }
}

function misconfigured(detail: string): ProblemError {
  return new ProblemError("unprocessable", { detail });
}
