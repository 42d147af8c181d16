import { createHash, randomUUID } from "node:crypto";

/**
 * The tunnel protocol (docs/decisions/0006-cluster-tunnel-http2.md): a WebSocket whose binary
 * messages carry one HTTP/2 connection; the platform is the HTTP/2 client, the relay the server.
 * Every request down the tunnel carries a platform-signed JWT in this header.
 */
export const REQUEST_SIGNATURE_HEADER = "x-agentplane-signature";
/** The 101 answer to a tunnel upgrade carries the relay's first cluster JWT and its lifetime (seconds). */
export const CLUSTER_JWT_HEADER = "x-agentplane-cluster-jwt";
export const CLUSTER_JWT_TTL_HEADER = "x-agentplane-cluster-jwt-expires-in";
/** The audience of per-request JWTs (never accepted by the gateway, whose cluster JWT audience differs). */
export const RELAY_AUDIENCE = "agentplane-cluster-relay";
/** Per-request JWTs live this long at most; the relay refuses longer ones. */
export const REQUEST_JWT_TTL_SECONDS = 60;
/**
 * A request JWT signed with a tunnel's delegated key carries, in this header, the certificate of
 * that key: a JWT signed with the project's key (`aud` below, `sub` the cluster, `cnf.jwk` the
 * delegated public key), which the relay verifies against the project's JWKS.
 */
export const DELEGATION_HEADER = "x-agentplane-delegation";
export const DELEGATION_AUDIENCE = "agentplane-cluster-relay-delegation";
/** How long a delegated key is certified (renewed at half; the relay refuses more than an hour). */
export const DELEGATION_TTL_SECONDS = 600;

/**
 * On an answer the relay made itself because the API server could not be asked (refused, DNS,
 * TLS, timeout): a problem+json whose `detail` names the cause, re-issued as the platform's own.
 */
export const RELAY_FAILURE_HEADER = "x-agentplane-relay-failure";

/** Requests the relay answers itself (`use: control`), never passed to the Kubernetes API. */
export const CONTROL_PATHS = {
  status: "/agentplane/v1/status",
  clusterJwt: "/agentplane/v1/cluster-jwt",
  tunnelToken: "/agentplane/v1/tunnel-token",
} as const;

export type RequestUse = "kube" | "control";

const EMPTY_BODY_HASH = createHash("sha256").update(new Uint8Array()).digest("base64url");

/** base64url SHA-256 of a body (of the empty body when there is none: most requests, a constant). */
export function bodyHash(body: Uint8Array | undefined): string {
  if (!body || body.length === 0) return EMPTY_BODY_HASH;
  return createHash("sha256").update(body).digest("base64url");
}

/** The claims of one request's JWT: what the relay checks before acting. */
export function requestClaims(args: {
  clusterId: string;
  method: string;
  path: string;
  body: Uint8Array | undefined;
  use: RequestUse;
}): { sub: string; aud: string; jti: string; htm: string; htu: string; bh: string; use: RequestUse } {
  return {
    sub: args.clusterId,
    aud: RELAY_AUDIENCE,
    jti: randomUUID(),
    htm: args.method.toUpperCase(),
    htu: args.path,
    bh: bodyHash(args.body),
    use: args.use,
  };
}
