/**
 * The tunnel protocol as the relay sees it (docs/decisions/0006-cluster-tunnel-http2.md). These
 * values are the wire contract with connections-svc (`src/tunnel/protocol.ts` there).
 */
export const REQUEST_SIGNATURE_HEADER = "x-agentplane-signature";
export const RELAY_AUDIENCE = "agentplane-cluster-relay";
export const MAX_REQUEST_JWT_LIFETIME_SECONDS = 60;
/** The certificate of a delegated request-signing key (project-signed JWT, `cnf.jwk` the key). */
export const DELEGATION_HEADER = "x-agentplane-delegation";
export const DELEGATION_AUDIENCE = "agentplane-cluster-relay-delegation";
/** The relay refuses certificates longer-lived than this (the platform asks for 10 minutes). */
export const MAX_DELEGATION_LIFETIME_SECONDS = 3600;
export const CLUSTER_ISSUER_PREFIX = "agentplane:project:";
/** The tunnel upgrade's answer carries the relay's first cluster JWT and its lifetime (seconds). */
export const CLUSTER_JWT_HEADER = "x-agentplane-cluster-jwt";
export const CLUSTER_JWT_TTL_HEADER = "x-agentplane-cluster-jwt-expires-in";
/** Marks an answer the relay made itself because the API server could not be asked (a 502 problem). */
export const RELAY_FAILURE_HEADER = "x-agentplane-relay-failure";
export const CONTROL_PREFIX = "/agentplane/v1/";
export const CONTROL_PATHS = {
  status: "/agentplane/v1/status",
  clusterJwt: "/agentplane/v1/cluster-jwt",
  tunnelToken: "/agentplane/v1/tunnel-token",
} as const;
