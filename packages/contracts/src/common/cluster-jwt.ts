/**
 * Cluster JWTs are ES256 tokens signed with a project's signing key: `iss` names the project,
 * `sub` is the cluster id, `kid` in the header picks the key from the project's JWKS.
 */
export const CLUSTER_JWT_AUDIENCE = "agentplane-control-plane";
export const CLUSTER_JWT_ISSUER_PREFIX = "agentplane:project:";

export function clusterJwtIssuer(projectId: string): string {
  return `${CLUSTER_JWT_ISSUER_PREFIX}${projectId}`;
}

export function projectIdFromClusterIssuer(issuer: string): string | undefined {
  return issuer.startsWith(CLUSTER_JWT_ISSUER_PREFIX) ? issuer.slice(CLUSTER_JWT_ISSUER_PREFIX.length) : undefined;
}
