import { SignProjectTokenResponse, TENANCY_INTERNAL } from "@agentplane/contracts";
import { type ServiceClient, servicePrincipal } from "@agentplane/service-kit";
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
    const body = await this.client.request<unknown>(
      "POST",
      TENANCY_INTERNAL.signProjectToken.replace("{projectId}", encodeURIComponent(projectId)),
      { principal: this.caller, body: { subject: sub, audience: aud, ttlSeconds, claims: rest } },
    );
    return SignProjectTokenResponse.parse(body).token;
  }
}
