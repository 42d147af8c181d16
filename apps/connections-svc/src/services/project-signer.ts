import { internalSignProjectTokenRoute, SignProjectTokenResponse } from "@agentplane/contracts";
import { callInternal, type ServiceClient, servicePrincipal } from "@agentplane/service-kit";
import type { JWTPayload } from "jose";

/**
 * Signs tokens with a project's current signing key (ES256, `kid` of that key): the cluster JWT a
 * relay uses for its own calls, and the per-request JWT every proxied request carries down a
 * tunnel. The private key stays with tenancy; in-process the launcher signs with tenancy's key
 * directly, distributed it is tenancy's internal signing endpoint.
 */
export interface ProjectSigner {
  sign(projectId: string, claims: JWTPayload & { sub: string; aud: string }, ttlSeconds: number): Promise<string>;
}

/** Signs through tenancy's internal endpoint (in process or over HTTP: the ServiceClient's fetch decides). */
export class TenancyProjectSigner implements ProjectSigner {
  private readonly client: ServiceClient;
  private readonly caller = servicePrincipal("connections");

  constructor(client: ServiceClient) {
    this.client = client;
  }

  async sign(
    projectId: string,
    claims: JWTPayload & { sub: string; aud: string },
    ttlSeconds: number,
  ): Promise<string> {
    const { sub, aud, ...rest } = claims;
    const answer = await callInternal(this.client, internalSignProjectTokenRoute, {
      principal: this.caller,
      params: { projectId },
      body: { subject: sub, audience: aud, ttlSeconds, claims: rest },
    });
    return SignProjectTokenResponse.parse(answer).token;
  }
}
